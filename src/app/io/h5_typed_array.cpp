// N-D datasets of every element type (h5_typed_array.hpp) over io/h5_box.hpp.
#include "io/h5_typed_array.hpp"

#include <algorithm>

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

Dims chunk_dims(const Dims& dims, DType dtype, const WriteOptions& o) {
  const std::size_t n = dims.size();
  const bool chunked = !o.chunk.empty() || o.chunk_rows > 0 || o.deflate > 0 || o.shuffle;
  if (!chunked || n == 0 || std::find(dims.begin(), dims.end(), hsize_t{0}) != dims.end())
    return {};
  const auto esize = static_cast<std::int64_t>(dtype_size(dtype));
  const auto extent = [&](std::size_t k) { return static_cast<std::int64_t>(dims[k]); };
  std::vector<std::int64_t> c(n, 1);
  if (!o.chunk.empty()) {
    for (std::size_t k = 0; k < n; ++k)
      c[k] = std::min(o.chunk[k], extent(k));
  } else if (n == 2) {
    const Shape m = io::chunk_dims({extent(0), extent(1)}, dtype, o);
    c = {m.rows, m.cols};
  } else {
    std::int64_t bytes = esize; // of the chunk's dimensions inside the one being chosen
    bool cut = false;           // whether one of them is cut: the outer ones get 1
    if (n > 1) {
      c[n - 1] = std::min(extent(n - 1), kMaxChunkBytes / bytes);
      bytes *= c[n - 1];
      cut = c[n - 1] < extent(n - 1);
    }
    for (std::size_t k = n - 1; k-- > 1;) {
      c[k] = cut ? 1 : std::clamp<std::int64_t>(kDefaultChunkBytes / bytes, 1, extent(k));
      cut = c[k] < extent(k);
      bytes *= c[k];
    }
    c[0] = cut                ? 1
           : o.chunk_rows > 0 ? std::min(o.chunk_rows, extent(0))
                              : std::clamp<std::int64_t>(kDefaultChunkBytes / bytes, 1, extent(0));
    c[0] = std::min(c[0], std::max<std::int64_t>(kMaxChunkBytes / bytes, 1));
  }
  return {c.begin(), c.end()};
}

void create_array(H5File& f, const std::string& path, DType dtype, const Dims& dims,
                  const WriteOptions& o) {
  const Dims chunk = chunk_dims(dims, dtype, o);
  detail::change_metadata(f, [&](hid_t file) {
    detail::require_new(file, f.path(), path);
    TESSERA_REQUIRE(o.chunk.empty() || o.chunk.size() == dims.size(), InputError,
                    "a chunk shape of rank {} for {}, of rank {}", o.chunk.size(), path,
                    dims.size());
    for (const std::int64_t c : o.chunk)
      TESSERA_REQUIRE(c > 0, InputError, "the chunk shape of {} has an extent {}", path, c);
    TESSERA_REQUIRE(o.chunk_rows >= 0 && o.deflate >= 0 && o.deflate <= 9, InputError,
                    "{}: chunk rows {} (at least 0) and gzip level {} (0 to 9)", path, o.chunk_rows,
                    o.deflate);
    std::uint64_t chunk_bytes = dtype_size(dtype);
    for (const hsize_t c : chunk)
      chunk_bytes *= c;
    TESSERA_REQUIRE(chunk.empty() || chunk_bytes <= std::uint64_t(kMaxChunkBytes), InputError,
                    "a chunk of {} holds {} bytes; HDF5 takes at most 4 GiB", path, chunk_bytes);
    // Every element is written; filling first would write the data twice (contiguous and
    // unfiltered chunked layouts: dataset_creation).
    const unique_hid dcpl = detail::dataset_creation(chunk, dtype, o);
    const unique_hid type = h5_file_type(dtype);
    detail::create_dataset_object(file, f.path(), path, type.get(), dims, {}, dcpl.get());
  });
  f.note_dataset(path, dims, chunk, dtype_size(dtype), o.deflate > 0);
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
