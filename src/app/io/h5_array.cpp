// N-dimensional dataset creation and box transfers (h5_array.hpp) over io/h5_box.hpp.
#include "io/h5_array.hpp"

#include "core/check.hpp"
#include "core/throw.hpp"
#include "io/h5_path.hpp"
#include "io/h5_turns.hpp"
#include "mpi/communicator.hpp"

namespace tessera::io::nd {

namespace {

hid_t memory_type(Elem e) {
  return e == Elem::f64 ? H5T_NATIVE_DOUBLE : H5T_NATIVE_INT64;
}
hid_t file_type(Elem e) {
  return e == Elem::f64 ? H5T_IEEE_F64LE : H5T_STD_I64LE;
}

Box whole_on_root(const H5File& f, std::size_t n) {
  const bool root = mpi::comm_rank(f.comm()) == 0;
  return {{0}, {root ? static_cast<hsize_t>(n) : 0}};
}

template <class T>
std::vector<T> read_vector(const H5File& f, const std::string& path, Elem e) {
  const Dims d = dims(f, path);
  if (d.size() != 1)
    TESSERA_THROW(InputError, "dataset {} in '{}' has rank {}, expected 1", path, f.path(),
                  d.size());
  std::vector<T> v(d[0]);
  read(f, path, e, {{0}, {d[0]}}, v.data());
  return v;
}

} // namespace

void create(H5File& f, const std::string& path, Elem e, const Dims& dims,
            const CreateOptions& opts) {
  detail::change_metadata(f, [&](hid_t file) {
    detail::require_new(file, f.path(), path);
    const unique_hid dcpl = checked_hid(H5Pcreate(H5P_DATASET_CREATE), "H5Pcreate");
    // Every element is written; filling first would write the data twice.
    CHECK_HDF5(H5Pset_fill_time(dcpl.get(), H5D_FILL_TIME_NEVER));
    if (!opts.chunk.empty())
      CHECK_HDF5(H5Pset_chunk(dcpl.get(), static_cast<int>(opts.chunk.size()), opts.chunk.data()));
    detail::create_dataset_object(file, f.path(), path, file_type(e), dims, opts.max_dims,
                                  dcpl.get());
  });
  f.note_dataset(path, dims, opts.chunk, 8);
}

void extend(H5File& f, const std::string& path, const Dims& d) {
  detail::change_metadata(f, [&](hid_t file) {
    const unique_hid dset = detail::open_dataset(file, f.path(), path);
    CHECK_HDF5(H5Dset_extent(dset.get(), d.data()));
  });
  f.note_extent(path, d);
}

Dims dims(const H5File& f, const std::string& path) {
  Dims d;
  detail::read_metadata(
      f, [&](hid_t file) { d = detail::extent(detail::open_dataset(file, f.path(), path).get()); });
  return d;
}

bool exists(const H5File& f, const std::string& path) {
  bool found = false;
  detail::read_metadata(f, [&](hid_t file) { found = detail::path_exists(file, path); });
  return found;
}

void write(H5File& f, const std::string& path, Elem e, const Box& mine, const void* buf) {
  detail::write_box(f, path, mine, memory_type(e), buf,
                    detail::box_fits(f.path(), path, mine, buf));
}

void read(const H5File& f, const std::string& path, Elem e, const Box& mine, void* buf) {
  detail::read_box(f, path, mine, memory_type(e), buf, detail::box_fits(f.path(), path, mine, buf));
}

void write_vector(H5File& f, const std::string& path, const std::vector<double>& v) {
  create(f, path, Elem::f64, {v.size()});
  write(f, path, Elem::f64, whole_on_root(f, v.size()), v.data());
}

void write_vector(H5File& f, const std::string& path, const std::vector<std::int64_t>& v) {
  create(f, path, Elem::i64, {v.size()});
  write(f, path, Elem::i64, whole_on_root(f, v.size()), v.data());
}

std::vector<double> read_f64_vector(const H5File& f, const std::string& path) {
  return read_vector<double>(f, path, Elem::f64);
}

std::vector<std::int64_t> read_i64_vector(const H5File& f, const std::string& path) {
  return read_vector<std::int64_t>(f, path, Elem::i64);
}

} // namespace tessera::io::nd
