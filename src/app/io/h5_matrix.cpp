// 2-D dataset inspection, creation and hyperslab transfers (see h5_matrix.hpp).
#include "io/h5_matrix.hpp"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <vector>

#include "core/check.hpp"
#include "core/throw.hpp"
#include "io/h5_box.hpp"
#include "io/h5_error.hpp"
#include "io/h5_path.hpp"
#include "io/h5_turns.hpp"
#include "io/h5_type.hpp"

namespace tessera::io {

namespace {

std::atomic<bool> last_collective{true};

constexpr std::int64_t max_chunk_bytes = kMaxChunkBytes;
constexpr std::int64_t default_chunk_bytes = kDefaultChunkBytes;

// integers_as_f64: an integer dataset, plain or packed (io/missing_values.hpp), is described as
// f64, the type reductions read it as; everything else refuses integers.
DatasetInfo describe(hid_t dset, const std::string& file_name, const std::string& path,
                     bool integers_as_f64) {
  const unique_hid space = checked_hid(H5Dget_space(dset), "H5Dget_space");
  const int ndims = H5Sget_simple_extent_ndims(space.get());
  CHECK_HDF5(ndims);
  if (ndims != 2)
    TESSERA_THROW(InputError, "dataset {} in '{}' has rank {}, expected a 2-D matrix", path,
                  file_name, ndims);
  hsize_t dims[2] = {0, 0};
  CHECK_HDF5(H5Sget_simple_extent_dims(space.get(), dims, nullptr));
  const unique_hid type = checked_hid(H5Dget_type(dset), "H5Dget_type");
  auto dtype = dtype_of_h5_type(type.get());
  // Integers are N-D arrays' business (permutations move them raw); a matrix holds none.
  if (dtype && dtype_is_integer(*dtype))
    dtype.reset();
  if (!dtype && integers_as_f64 && H5Tget_class(type.get()) == H5T_INTEGER)
    dtype = DType::f64;
  if (!dtype)
    TESSERA_THROW(InputError,
                  "dataset {} in '{}' holds {} values; matrix operations handle f32, f64, c64 and "
                  "c128 (complex as the compound {{r, i}} of two f32 or two f64, as h5py writes "
                  "them); `tessera transpose` also moves integer arrays as they are",
                  path, file_name, describe_h5_type(type.get()));
  return {{static_cast<std::int64_t>(dims[0]), static_cast<std::int64_t>(dims[1])}, *dtype};
}

// Checks done by every rank before a transfer, so the transfer itself cannot fail on one rank
// only (a rank failing inside a collective H5Dread would leave the others waiting).
void check_transfer(const DatasetInfo& info, const Hyperslab& s, DType dtype,
                    const std::string& file_name, const std::string& path, const void* buf) {
  if (dtype_is_real(dtype) != dtype_is_real(info.dtype))
    TESSERA_THROW(InputError, "dataset {} in '{}' holds {} values, not convertible to {}", path,
                  file_name, dtype_name(info.dtype), dtype_name(dtype));
  const Shape& m = info.shape;
  if (s.row0 < 0 || s.rows < 0 || s.col0 < 0 || s.cols < 0 || s.row0 + s.rows > m.rows ||
      s.col0 + s.cols > m.cols)
    TESSERA_THROW(InputError,
                  "rows [{}, {}) x columns [{}, {}) are outside dataset {} in '{}' of shape {}",
                  s.row0, s.row0 + s.rows, s.col0, s.col0 + s.cols, path, file_name, m.str());
  if (!s.empty() && buf == nullptr)
    TESSERA_THROW(InternalError, "null buffer for a {}x{} block of {}", s.rows, s.cols, path);
}

Box box_of(const Hyperslab& s) {
  return {{static_cast<hsize_t>(s.row0), static_cast<hsize_t>(s.col0)},
          {static_cast<hsize_t>(s.rows), static_cast<hsize_t>(s.cols)}};
}

// The checks every rank makes on the open dataset before a transfer of `mine`.
detail::BoxCheck checks(const H5File& f, const std::string& path, const Hyperslab& mine,
                        DType dtype, const void* buf) {
  return [&f, &path, &mine, dtype, buf](hid_t dset) {
    // Packed integers: the caller decided to read them as f64 (inspect_dataset).
    check_transfer(describe(dset, f.path(), path, true), mine, dtype, f.path(), path, buf);
  };
}

// The chunk shape of a dataset written with `o`; empty for the contiguous layout.
std::vector<hsize_t> chunk_of(Shape shape, DType dtype, const WriteOptions& o) {
  const bool chunked = o.chunk_rows > 0 || o.chunk_cols > 0 || o.deflate > 0 || o.shuffle;
  if (!chunked || shape.rows <= 0 || shape.cols <= 0) // a bad shape fails in check_options
    return {};
  const auto esize = static_cast<std::int64_t>(dtype_size(dtype));
  std::int64_t cols = o.chunk_cols > 0 ? std::min(o.chunk_cols, shape.cols) : shape.cols;
  cols = std::min(cols, max_chunk_bytes / esize);
  std::int64_t rows =
      o.chunk_rows > 0
          ? std::min(o.chunk_rows, shape.rows)
          : std::clamp<std::int64_t>(default_chunk_bytes / (cols * esize), 1, shape.rows);
  rows = std::min(rows, std::max<std::int64_t>(max_chunk_bytes / (cols * esize), 1));
  return {static_cast<hsize_t>(rows), static_cast<hsize_t>(cols)};
}

} // namespace

unique_hid detail::dataset_creation(const std::vector<hsize_t>& chunk, DType dtype,
                                    const WriteOptions& o) {
  unique_hid dcpl = checked_hid(H5Pcreate(H5P_DATASET_CREATE), "H5Pcreate(H5P_DATASET_CREATE)");
  if (!o.fill_value.empty()) {
    if (o.fill_value.size() != dtype_size(dtype))
      TESSERA_THROW(InternalError, "a fill value of {} bytes for a {} dataset", o.fill_value.size(),
                    dtype_name(dtype));
    CHECK_HDF5(H5Pset_fill_value(dcpl.get(), h5_memory_type(dtype).get(), o.fill_value.data()));
  }
  if (chunk.empty()) {
    // Parallel HDF5 allocates contiguous datasets at creation; writing fill values there
    // would write the whole matrix twice.
    CHECK_HDF5(H5Pset_fill_time(dcpl.get(), H5D_FILL_TIME_NEVER));
    return dcpl;
  }
  CHECK_HDF5(H5Pset_chunk(dcpl.get(), static_cast<int>(chunk.size()), chunk.data()));
  if (o.shuffle)
    CHECK_HDF5(H5Pset_shuffle(dcpl.get())); // before gzip: filters run in the order set
  if (o.deflate > 0) {
    if (H5Zfilter_avail(H5Z_FILTER_DEFLATE) <= 0)
      TESSERA_THROW(NotCompiled, "this HDF5 library has no deflate (gzip) filter");
    CHECK_HDF5(H5Pset_deflate(dcpl.get(), static_cast<unsigned>(o.deflate)));
  } else {
    CHECK_HDF5(H5Pset_fill_time(dcpl.get(), H5D_FILL_TIME_NEVER));
  }
  return dcpl;
}

namespace {

void check_options(const std::string& path, Shape shape, const WriteOptions& o) {
  if (shape.rows < 0 || shape.cols < 0)
    TESSERA_THROW(InputError, "cannot create {} of shape {}", path, shape.str());
  if (o.chunk_rows < 0 || o.chunk_cols < 0)
    TESSERA_THROW(InputError, "chunk shape of {} must not be negative, got {}x{}", path,
                  o.chunk_rows, o.chunk_cols);
  if (o.deflate < 0 || o.deflate > 9)
    TESSERA_THROW(InputError, "deflate level of {} must be 0 to 9, got {}", path, o.deflate);
}

} // namespace

// The public view of chunk_of().
Shape chunk_dims(Shape shape, DType dtype, const WriteOptions& o) {
  const std::vector<hsize_t> c = chunk_of(shape, dtype, o);
  if (c.empty())
    return {};
  return {static_cast<std::int64_t>(c[0]), static_cast<std::int64_t>(c[1])};
}

DatasetInfo inspect_dataset(const H5File& f, const std::string& path, bool integers_as_f64) {
  DatasetInfo info{};
  detail::read_metadata(f, [&](hid_t file) {
    const unique_hid dset = detail::open_dataset(file, f.path(), path);
    info = describe(dset.get(), f.path(), path, integers_as_f64);
  });
  return info;
}

bool has_dataset(const H5File& f, const std::string& path) {
  bool found = false;
  detail::read_metadata(f, [&](hid_t file) {
    detail::check_dataset_path(path);
    if (!detail::path_exists(file, path))
      return;
    const unique_hid obj = detail::open_object(file, f.path(), path);
    found = H5Iget_type(obj.get()) == H5I_DATASET;
  });
  return found;
}

void read_block(const H5File& f, const std::string& path, const Hyperslab& mine, DType dtype,
                void* buf) {
  const unique_hid mem_type = h5_memory_type(dtype);
  last_collective = detail::read_box(f, path, box_of(mine), mem_type.get(), buf,
                                     checks(f, path, mine, dtype, buf));
}

void read_rows(const H5File& f, const std::string& path, const BlockDistribution& dist, int rank,
               DType dtype, void* buf) {
  const DatasetInfo info = inspect_dataset(f, path);
  if (info.shape != dist.global())
    TESSERA_THROW(InputError, "dataset {} in '{}' has shape {}, expected {}", path, f.path(),
                  info.shape.str(), dist.global().str());
  read_block(f, path, Hyperslab::rows_of(dist, rank), dtype, buf);
}

void create_dataset(H5File& f, const std::string& path, Shape shape, DType dtype,
                    const WriteOptions& opts) {
  const std::vector<hsize_t> dims = {static_cast<hsize_t>(std::max<std::int64_t>(shape.rows, 0)),
                                     static_cast<hsize_t>(std::max<std::int64_t>(shape.cols, 0))};
  const std::vector<hsize_t> chunk = chunk_of(shape, dtype, opts);
  detail::change_metadata(f, [&](hid_t file) {
    detail::check_dataset_path(path);
    check_options(path, shape, opts);
    detail::require_new(file, f.path(), path);
    const unique_hid dcpl = detail::dataset_creation(chunk, dtype, opts);
    const unique_hid type = h5_file_type(dtype);
    detail::create_dataset_object(file, f.path(), path, type.get(), dims, {}, dcpl.get());
  });
  f.note_dataset(path, dims, chunk, dtype_size(dtype), opts.deflate > 0);
}

void write_block(H5File& f, const std::string& path, const Hyperslab& mine, DType dtype,
                 const void* buf) {
  const unique_hid mem_type = h5_memory_type(dtype);
  last_collective = detail::write_box(f, path, box_of(mine), mem_type.get(), buf,
                                      checks(f, path, mine, dtype, buf));
}

void write_rows(H5File& f, const std::string& path, const BlockDistribution& dist, int rank,
                DType dtype, const void* buf, const WriteOptions& opts) {
  create_dataset(f, path, dist.global(), dtype, opts);
  write_block(f, path, Hyperslab::rows_of(dist, rank), dtype, buf);
}

bool last_transfer_was_collective() noexcept {
  return last_collective;
}

} // namespace tessera::io
