// Row-block hyperslab reads and writes of 2-D datasets, collective when the file is open with
// the MPI-IO driver (H5FD_MPIO_COLLECTIVE, one call on every rank, ranks with nothing to move
// select nothing but still take part); in serial mode the ranks write in turn and read side by
// side, on the same file format (io/h5_turns.hpp). A read whose rows touch a chunk that was
// never written (h5py, netCDF4) is independent on every rank instead: HDF5 1.10's collective
// reads fail on such chunks; independent reads give the fill value there.
//
// Every function here is collective over the file's communicator and throws on every rank when
// it fails on one (mpi::collectively): InputError for what the user asked for (missing dataset,
// wrong rank, wrong element type, a hyperslab outside the matrix), IoError when HDF5 fails.
// Element types and the complex layout: io/h5_type.hpp.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <tessera/hdf5.hpp>

#include "core/block_distribution.hpp"
#include "core/dtype.hpp"
#include "io/h5_file.hpp"
#include "io/h5_handle.hpp"

namespace tessera::io {

// A dataset's shape and element type: the library's (tessera/hdf5.hpp).
using DatasetInfo = h5::DatasetInfo;

// The library's options (tessera/hdf5.hpp: chunk shape, gzip level), and those of tessera's own
// tools.
struct WriteOptions : h5::WriteOptions {
  bool shuffle = false; // the shuffle filter before gzip (byte planes compress better);
                        // chunked like deflate
  // The dataset's fill value (what unwritten chunks read as), one element of the dataset's
  // dtype in memory; empty: HDF5's default, 0.
  std::vector<unsigned char> fill_value{};
  // N-D datasets (io/h5_typed_array.hpp): the whole chunk shape, outermost first (each entry
  // capped at its dimension's extent); empty: from chunk_rows (along the outermost dimension),
  // deflate and shuffle. 2-D matrices take chunk_rows and chunk_cols instead.
  std::vector<std::int64_t> chunk{};
};

// HDF5 caps a chunk at 4 GiB; a chunk of about 1 MiB reads and compresses well.
inline constexpr std::int64_t kMaxChunkBytes = (std::int64_t{1} << 32) - 1;
inline constexpr std::int64_t kDefaultChunkBytes = std::int64_t{1} << 20;

// The HDF5 chunk shape create_dataset() gives a dataset of `shape` with options `o`; {0, 0} for
// a contiguous layout.
Shape chunk_dims(Shape shape, DType dtype, const WriteOptions& o);

// A rectangle of a matrix: rows [row0, row0 + rows) and columns [col0, col0 + cols); in memory
// it is a row-major rows x cols block. Empty (rows or cols 0) is legal.
struct Hyperslab {
  std::int64_t row0 = 0, rows = 0;
  std::int64_t col0 = 0, cols = 0;
  std::int64_t size() const noexcept { return rows * cols; }
  bool empty() const noexcept { return rows == 0 || cols == 0; }
  // This rank's rows of a row-block distribution, all columns.
  static Hyperslab rows_of(const BlockDistribution& dist, int rank) {
    return {dist.begin(rank), dist.rows(rank), 0, dist.global().cols};
  }
};

// Throws InputError on every rank naming the dataset when it is missing, not 2-D, or of an
// element type tessera cannot handle (integers, strings, …; f32, f64, c64 and c128 are).
// integers_as_f64: an integer dataset, plain or packed (scale_factor, add_offset:
// io/missing_values.hpp), is described as f64, which HDF5 converts it to on read (reductions).
DatasetInfo inspect_dataset(const H5File& f, const std::string& path, bool integers_as_f64 = false);
// Whether `path` names a dataset in the file (false for a missing path or a group).
bool has_dataset(const H5File& f, const std::string& path);

// Reads rows [dist.begin(rank), dist.end(rank)) into `buf` (converting to `dtype`: f32 ↔ f64
// and c64 ↔ c128 convert, real ↔ complex is an InputError). dist.global() must equal the
// dataset's shape.
void read_rows(const H5File& f, const std::string& path, const BlockDistribution& dist, int rank,
               DType dtype, void* buf);
// Each rank reads its own hyperslab (any rectangle, possibly empty) into `buf`.
void read_block(const H5File& f, const std::string& path, const Hyperslab& mine, DType dtype,
                void* buf);

// Creates the dataset (and parent groups) of dist.global() and writes this rank's rows from
// `buf`. InputError when the dataset exists already.
void write_rows(H5File& f, const std::string& path, const BlockDistribution& dist, int rank,
                DType dtype, const void* buf, const WriteOptions& opts = {});
// The two halves of write_rows, for writers that fill a dataset piece by piece (out of core).
void create_dataset(H5File& f, const std::string& path, Shape shape, DType dtype,
                    const WriteOptions& opts = {});
// Each rank writes its own hyperslab (possibly empty) of an existing dataset from `buf`
// (converting from `dtype` to the dataset's type where HDF5 can).
void write_block(H5File& f, const std::string& path, const Hyperslab& mine, DType dtype,
                 const void* buf);

// True when the last transfer (read_* / write_*) on this process really was collective: HDF5
// reported no cause for falling back to independent I/O (H5Pget_mpio_no_collective_cause) on
// any rank. Type conversion (reading f32 as f64) is such a cause in HDF5 1.10. Always true in
// serial mode, where there is no collective transfer to fall back from; false after an
// independent read of unwritten chunks.
bool last_transfer_was_collective() noexcept;

namespace detail {
// The creation properties of a dataset of `dtype` with chunk shape `chunk` (empty: contiguous)
// and the filters and fill value of `o`: shared by the matrices and the N-D arrays.
unique_hid dataset_creation(const std::vector<hsize_t>& chunk, DType dtype, const WriteOptions& o);
} // namespace detail

} // namespace tessera::io
