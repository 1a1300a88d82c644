// Distributed HDF5 I/O of row-distributed matrices: every rank reads or writes its own block of
// rows of a 2-D dataset; read_layout and write_layout (below) do the same for any layout.
// Collective over the communicator (parallel HDF5 with collective transfers when the library has
// it; with a serial HDF5 the ranks take turns on the same file format). Errors are thrown on
// every rank: InputError for what was asked (missing dataset, wrong shape or element type),
// IoError when the file system or HDF5 fails. Any MPI thread level suffices.
//
//   tessera::h5::write_rows("a.h5", "/A", dist, tessera::DType::f64, block, MPI_COMM_WORLD);
//   auto info = tessera::h5::inspect("a.h5", "/A", MPI_COMM_WORLD);   // shape, dtype
//   tessera::h5::read_rows("a.h5", "/A", dist, tessera::DType::f64, block, MPI_COMM_WORLD);
//
// Files are tessera's output format: written as NAME.XXXXXX.partial and renamed to NAME when
// complete (an existing NAME is replaced), with the root attribute complete = 1; complex
// numbers are stored as h5py stores them. docs/output.md describes the layout.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <memory>
#include <string>

#include <tessera/block_distribution.hpp>
#include <tessera/dtype.hpp>
#include <tessera/export.h>
#include <tessera/layout.hpp>

namespace tessera::h5 {

struct DatasetInfo {
  Shape shape;
  DType dtype;
};

struct WriteOptions {
  std::int64_t chunk_rows = 0; // 0: contiguous layout (unless deflate asks for chunks)
  std::int64_t chunk_cols = 0; // 0 with chunk_rows > 0: whole rows
  int deflate = 0; // 0: no compression; 1-9: gzip level (chunks of about 1 MiB of rows are
                   // chosen when no chunk shape is given)
};

// Collective. The shape and element type of a 2-D dataset.
TESSERA_API DatasetInfo inspect(const std::string& file, const std::string& dataset, MPI_Comm comm);

// Collective. Reads this rank's rows [dist.begin(rank), dist.end(rank)) into `block`
// (dist.rows(rank) × cols elements of `dtype`, row-major; f32 <-> f64 and c64 <-> c128 convert).
// dist.global() must equal the dataset's shape.
TESSERA_API void read_rows(const std::string& file, const std::string& dataset,
                           const BlockDistribution& dist, DType dtype, void* block, MPI_Comm comm);

// A file being written: datasets are added one by one; commit() makes it appear under its name.
// Destroyed without commit(), nothing is left behind.
class TESSERA_API Writer {
public:
  // Collective: creates the file's temporary (and takes its lock).
  Writer(const std::string& file, MPI_Comm comm);
  ~Writer();
  Writer(Writer&&) noexcept;
  Writer& operator=(Writer&&) noexcept;

  // Collective: creates `dataset` (and its parent groups) of dist.global() and writes this
  // rank's rows from `block`. InputError when it exists already.
  void write_rows(const std::string& dataset, const BlockDistribution& dist, DType dtype,
                  const void* block, const WriteOptions& options = {});
  // Collective: write_layout (below) into this file.
  void write_layout(const std::string& dataset, const Layout& layout, DType dtype,
                    const void* block, const WriteOptions& options = {},
                    std::int64_t memory_limit = 0);
  // Collective: completes the file and renames it to its name.
  void commit();

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Collective: a file holding one dataset (Writer + write_rows + commit).
TESSERA_API void write_rows(const std::string& file, const std::string& dataset,
                            const BlockDistribution& dist, DType dtype, const void* block,
                            MPI_Comm comm, const WriteOptions& options = {});

template <class T>
void read_rows(const std::string& file, const std::string& dataset, const BlockDistribution& dist,
               T* block, MPI_Comm comm) {
  read_rows(file, dataset, dist, dtype_of<T>, static_cast<void*>(block), comm);
}
template <class T>
void write_rows(const std::string& file, const std::string& dataset, const BlockDistribution& dist,
                const T* block, MPI_Comm comm, const WriteOptions& options = {}) {
  write_rows(file, dataset, dist, dtype_of<T>, static_cast<const void*>(block), comm, options);
}

// ---- Any layout (tessera/layout.hpp): a ScaLAPACK code loads and saves its matrix in one call.
//
//   auto cyclic = tessera::Layout::from_scalapack(desc, nprow, npcol, nranks);
//   tessera::h5::read_layout("a.h5", "/A", cyclic, tessera::DType::f64, a_local, comm);
//   tessera::h5::write_layout("b.h5", "/B", cyclic, tessera::DType::f64, a_local, comm);
//
// The file is read (written) in row blocks, the collective fast path, and each row block is
// redistributed into (out of) the layout by a RedistributePlan. Extra memory per rank, on top
// of the local block: a row block of the matrix (about M·N/P elements) and the plan's exchange
// buffers (what this rank sends and receives: at most a row block one way, at most its share of
// the layout the other), so about three times M·N/P elements for a layout that spreads the
// matrix evenly. memory_limit > 0 (bytes per rank) bounds it, for such layouts: the matrix then
// moves in slices of rows, read and redistributed one after the other (one plan each), of at
// least one row per rank. Layouts whose local blocks are row- or column-major with any leading
// dimension are accepted; ranks holding nothing pass null. layout.nranks() must be comm's size.

// Collective. Reads the 2-D dataset into this rank's local block of `layout` (f32 <-> f64 and
// c64 <-> c128 convert, as read_rows). layout.global() must equal the dataset's shape. Elements
// of the local block that belong to no block of the matrix (leading-dimension padding, holes of
// a grid layout) are left as they were.
TESSERA_API void read_layout(const std::string& file, const std::string& dataset,
                             const Layout& layout, DType dtype, void* block, MPI_Comm comm,
                             std::int64_t memory_limit = 0);

// Collective: a file holding one dataset of layout.global(), written from each rank's local
// block of `layout` (Writer + write_layout + commit; an existing file is replaced when the new
// one is complete).
TESSERA_API void write_layout(const std::string& file, const std::string& dataset,
                              const Layout& layout, DType dtype, const void* block, MPI_Comm comm,
                              const WriteOptions& options = {}, std::int64_t memory_limit = 0);

template <class T>
void read_layout(const std::string& file, const std::string& dataset, const Layout& layout,
                 T* block, MPI_Comm comm, std::int64_t memory_limit = 0) {
  read_layout(file, dataset, layout, dtype_of<T>, static_cast<void*>(block), comm, memory_limit);
}
template <class T>
void write_layout(const std::string& file, const std::string& dataset, const Layout& layout,
                  const T* block, MPI_Comm comm, const WriteOptions& options = {},
                  std::int64_t memory_limit = 0) {
  write_layout(file, dataset, layout, dtype_of<T>, static_cast<const void*>(block), comm, options,
               memory_limit);
}

} // namespace tessera::h5
