// Dimension scales through H5DS, and the copy of a 1-D coordinate dataset between files (see
// h5_dimension_scales.hpp).
#include "io/h5_dimension_scales.hpp"

#include <hdf5_hl.h>

#include <cstdint>

#include "core/check.hpp"
#include "core/throw.hpp"
#include "io/h5_error.hpp"
#include "io/h5_path.hpp"
#include "io/h5_turns.hpp"
#include "mpi/communicator.hpp"

namespace tessera::io {

namespace {

int rank_of(hid_t dset) {
  const unique_hid space = checked_hid(H5Dget_space(dset), "H5Dget_space");
  const int n = H5Sget_simple_extent_ndims(space.get());
  CHECK_HDF5(n);
  return n;
}

std::string object_name(hid_t obj) {
  const ssize_t n = H5Iget_name(obj, nullptr, 0);
  CHECK_HDF5(n);
  std::string s(static_cast<std::size_t>(n) + 1, '\0');
  CHECK_HDF5(H5Iget_name(obj, s.data(), s.size()));
  s.resize(static_cast<std::size_t>(n));
  return s;
}

herr_t first_scale(hid_t, unsigned, hid_t scale, void* out) {
  try {
    *static_cast<std::string*>(out) = object_name(scale);
  } catch (...) {
    return -1;
  }
  return 1; // stop at the first
}

std::string scale_name(hid_t scale) {
  const ssize_t n = H5DSget_scale_name(scale, nullptr, 0);
  if (n <= 0)
    return {};
  std::string s(static_cast<std::size_t>(n) + 1, '\0');
  CHECK_HDF5(H5DSget_scale_name(scale, s.data(), s.size()));
  s.resize(static_cast<std::size_t>(n));
  return s;
}

std::string label_of(hid_t dset, unsigned dim) {
  const ssize_t n = H5DSget_label(dset, dim, nullptr, 0);
  if (n <= 0)
    return {};
  std::string s(static_cast<std::size_t>(n) + 1, '\0');
  CHECK_HDF5(H5DSget_label(dset, dim, s.data(), s.size()));
  s.resize(static_cast<std::size_t>(n));
  return s;
}

} // namespace

void attach_dimension_scale(H5File& f, const std::string& dataset, unsigned dim,
                            const std::string& scale, const std::string& name) {
  f.reserve_space();
  detail::change_metadata(f, [&](hid_t file) {
    const unique_hid d = detail::open_dataset_object(file, f.path(), dataset);
    const unique_hid s = detail::open_dataset_object(file, f.path(), scale);
    if (rank_of(s.get()) != 1)
      TESSERA_THROW(InputError, "{} in '{}' is not 1-D and cannot be a dimension scale", scale,
                    f.path());
    if (static_cast<int>(dim) >= rank_of(d.get()))
      TESSERA_THROW(InputError, "{} in '{}' has no dimension {}", dataset, f.path(), dim);
    const htri_t is_scale = H5DSis_scale(s.get());
    CHECK_HDF5(is_scale);
    if (is_scale == 0 && H5DSset_scale(s.get(), name.c_str()) < 0)
      TESSERA_THROW(IoError, "cannot make {} a dimension scale in '{}': {}", scale, f.path(),
                    detail::take_hdf5_error());
    if (H5DSattach_scale(d.get(), s.get(), dim) < 0)
      TESSERA_THROW(IoError, "cannot attach {} to dimension {} of {} in '{}': {}", scale, dim,
                    dataset, f.path(), detail::take_hdf5_error());
    CHECK_HDF5(H5DSset_label(d.get(), dim, name.c_str()));
  });
}

void link_object(H5File& f, const std::string& existing, const std::string& link) {
  f.reserve_space();
  detail::change_metadata(f, [&](hid_t file) {
    if (detail::path_exists(file, link))
      TESSERA_THROW(InputError, "{} exists already in '{}'", link, f.path());
    const unique_hid lcpl = checked_hid(H5Pcreate(H5P_LINK_CREATE), "H5Pcreate(H5P_LINK_CREATE)");
    CHECK_HDF5(H5Pset_create_intermediate_group(lcpl.get(), 1));
    if (H5Lcreate_hard(file, existing.c_str(), file, link.c_str(), lcpl.get(), H5P_DEFAULT) < 0)
      TESSERA_THROW(IoError, "cannot link {} to {} in '{}': {}", link, existing, f.path(),
                    detail::take_hdf5_error());
  });
}

std::vector<DimensionScale> dimension_scales(const H5File& f, const std::string& dataset) {
  std::vector<DimensionScale> out;
  detail::read_metadata(f, [&](hid_t file) {
    out.clear();
    const unique_hid d = detail::open_dataset_object(file, f.path(), dataset);
    const int n = rank_of(d.get());
    for (int k = 0; k < n; ++k) {
      DimensionScale s;
      const unsigned dim = static_cast<unsigned>(k);
      const int count = H5DSget_num_scales(d.get(), dim);
      if (count > 0) {
        if (H5DSiterate_scales(d.get(), dim, nullptr, first_scale, &s.path) < 0)
          TESSERA_THROW(IoError, "cannot read the dimension scales of {} in '{}': {}", dataset,
                        f.path(), detail::take_hdf5_error());
        const unique_hid sd = detail::open_dataset_object(file, f.path(), s.path);
        s.name = scale_name(sd.get());
      }
      if (s.name.empty())
        s.name = label_of(d.get(), dim);
      out.push_back(std::move(s));
    }
  });
  return out;
}

namespace {

// The little-endian file type of v's stored width (HDF5's predefined ids: nothing to close).
hid_t stored_type(const VectorValues& v) {
  if (!v.integer)
    return v.bytes == 4 ? H5T_IEEE_F32LE : H5T_IEEE_F64LE;
  switch (v.bytes) {
  case 1:
    return v.is_signed ? H5T_STD_I8LE : H5T_STD_U8LE;
  case 2:
    return v.is_signed ? H5T_STD_I16LE : H5T_STD_U16LE;
  case 4:
    return v.is_signed ? H5T_STD_I32LE : H5T_STD_U32LE;
  default:
    return v.is_signed ? H5T_STD_I64LE : H5T_STD_U64LE;
  }
}

} // namespace

VectorValues read_vector_values(const H5File& from, const std::string& path) {
  VectorValues v;
  auto& [integer, bytes, is_signed, reals, ints] = v;
  detail::read_metadata(from, [&](hid_t file) {
    const unique_hid d = detail::open_dataset_object(file, from.path(), path);
    if (rank_of(d.get()) != 1)
      TESSERA_THROW(InputError, "{} in '{}' is not 1-D", path, from.path());
    const unique_hid space = checked_hid(H5Dget_space(d.get()), "H5Dget_space");
    const hssize_t n = H5Sget_simple_extent_npoints(space.get());
    CHECK_HDF5(n);
    const unique_hid type = checked_hid(H5Dget_type(d.get()), "H5Dget_type");
    integer = H5Tget_class(type.get()) == H5T_INTEGER;
    if (!integer && H5Tget_class(type.get()) != H5T_FLOAT)
      TESSERA_THROW(InputError, "{} in '{}' holds neither integers nor floats", path, from.path());
    bytes = H5Tget_size(type.get());
    is_signed = !integer || H5Tget_sign(type.get()) != H5T_SGN_NONE;
    void* buf = nullptr;
    if (integer) {
      ints.resize(static_cast<std::size_t>(n));
      buf = ints.data();
    } else {
      reals.resize(static_cast<std::size_t>(n));
      buf = reals.data();
    }
    if (n > 0 && H5Dread(d.get(), integer ? H5T_NATIVE_INT64 : H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL,
                         H5P_DEFAULT, buf) < 0)
      TESSERA_THROW(IoError, "cannot read {} in '{}': {}", path, from.path(),
                    detail::take_hdf5_error());
  });
  return v;
}

void write_vector_values(H5File& to, const std::string& path, const VectorValues& v) {
  const auto& [integer, bytes, is_signed, reals, ints] = v;
  const hsize_t n = integer ? ints.size() : reals.size();
  const hid_t mem = integer ? H5T_NATIVE_INT64 : H5T_NATIVE_DOUBLE;
  const void* buf = integer ? static_cast<const void*>(ints.data()) : reals.data();
  const hid_t stored = stored_type(v);
  to.note_dataset(path, {n}, {}, bytes);
  to.reserve_space();
  const bool writer = mpi::comm_rank(to.comm()) == 0;
  detail::change_metadata(to, [&](hid_t file) {
    if (detail::path_exists(file, path))
      TESSERA_THROW(InputError, "{} exists already in '{}'", path, to.path());
    const unique_hid lcpl = checked_hid(H5Pcreate(H5P_LINK_CREATE), "H5Pcreate(H5P_LINK_CREATE)");
    CHECK_HDF5(H5Pset_create_intermediate_group(lcpl.get(), 1));
    const unique_hid space = checked_hid(H5Screate_simple(1, &n, nullptr), "H5Screate_simple");
    const unique_hid d = checked_hid(
        H5Dcreate2(file, path.c_str(), stored, space.get(), lcpl.get(), H5P_DEFAULT, H5P_DEFAULT),
        "H5Dcreate2");
    // Parallel HDF5 allocates a contiguous dataset when it is created, so one rank may write it
    // alone (an independent transfer); in serial mode only rank 0 gets here.
    if (n > 0 && (writer || !to.parallel()) &&
        H5Dwrite(d.get(), mem, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0)
      TESSERA_THROW(IoError, "cannot write {} in '{}': {}", path, to.path(),
                    detail::take_hdf5_error());
  });
}

} // namespace tessera::io
