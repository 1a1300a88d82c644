// N-D datasets of every element type (h5_typed_array.hpp) over io/h5_box.hpp.
#include "io/h5_typed_array.hpp"

#include "core/check.hpp"
#include "core/throw.hpp"
#include "io/h5_turns.hpp"
#include "io/h5_type.hpp"

namespace tessera::io::nd {

namespace {

constexpr int typed_array_max_rank = 8;

} // namespace

ArrayInfo inspect_array(const H5File& f, const std::string& path) {
  ArrayInfo info{};
  detail::read_metadata(f, [&](hid_t file) {
    const unique_hid dset = detail::open_dataset(file, f.path(), path);
    info.dims = detail::extent(dset.get());
    const auto rank = static_cast<int>(info.dims.size());
    if (rank < 1 || rank > typed_array_max_rank)
      TESSERA_THROW(InputError, "dataset {} in '{}' has rank {}; arrays of rank 1 to {} are taken",
                    path, f.path(), rank, typed_array_max_rank);
    const unique_hid type = checked_hid(H5Dget_type(dset.get()), "H5Dget_type");
    const auto dtype = dtype_of_h5_type(type.get());
    if (!dtype)
      TESSERA_THROW(InputError,
                    "dataset {} in '{}' holds {} values; tessera moves f32, f64, c64, c128 "
                    "(complex as the compound {{r, i}} of two floats) and integers of 8 to 64 bits",
                    path, f.path(), describe_h5_type(type.get()));
    info.dtype = *dtype;
  });
  return info;
}

void create_array(H5File& f, const std::string& path, DType dtype, const Dims& dims) {
  detail::change_metadata(f, [&](hid_t file) {
    detail::require_new(file, f.path(), path);
    const unique_hid dcpl = checked_hid(H5Pcreate(H5P_DATASET_CREATE), "H5Pcreate");
    // Every element is written; filling first would write the data twice.
    CHECK_HDF5(H5Pset_fill_time(dcpl.get(), H5D_FILL_TIME_NEVER));
    const unique_hid type = h5_file_type(dtype);
    detail::create_dataset_object(file, f.path(), path, type.get(), dims, {}, dcpl.get());
  });
  f.note_dataset(path, dims, {}, dtype_size(dtype));
}

void read_array(const H5File& f, const std::string& path, DType dtype, const Box& box, void* buf) {
  const unique_hid mem = h5_memory_type(dtype);
  detail::read_box(f, path, box, mem.get(), buf, detail::box_fits(f.path(), path, box, buf));
}

void write_array(H5File& f, const std::string& path, DType dtype, const Box& box, const void* buf) {
  const unique_hid mem = h5_memory_type(dtype);
  detail::write_box(f, path, box, mem.get(), buf, detail::box_fits(f.path(), path, box, buf));
}

} // namespace tessera::io::nd
