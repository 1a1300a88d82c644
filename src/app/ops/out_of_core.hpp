// Out-of-core transpose and reductions of HDF5 datasets in bounded memory (docs/architecture.md,
// "Where each concept lives"). The dataset streams through a fixed set of buffers per rank: the I/O
// thread reads chunks ahead of compute and writes results behind it, through StagingQueues, so
// file I/O overlaps compute and no rank ever holds more than `memory_limit` of staging.
//
//   ops::OutOfCoreOptions o;
//   o.memory_limit = 512 << 20;   // per rank
//   o.timers = &timers;           // read, compute, exchange, write, waits (mpi::timing_table)
//   ops::transpose_out_of_core(DatasetRef::parse("a.h5:/A"), DatasetRef::parse("at.h5:/AT"),
//                             o, MPI_COMM_WORLD);
//   ReduceResult r = ops::reduce_out_of_core(DatasetRef::parse("a.h5:/A"), {Op::Sum, Op::Max},
//                                           Axis::All, o, MPI_COMM_WORLD);
//
// Results are those of the in-memory path: the transposed dataset is bit-identical to
// TransposePlan's, and reductions equal ReducePlan's bit for bit (the Sum family follows the
// canonical order of core/reduction.hpp across chunk boundaries).
//
// Both calls are collective over `comm` and need MPI_THREAD_MULTIPLE. Errors on either side
// (a read or write failure, a corrupt chunk, an exception in compute, an input file that
// changes while it is read: io/input_watch.hpp) stop both threads of every rank promptly and
// are thrown on every rank, naming the cause; the output's temporary is removed. Chunk
// geometry and measurements: docs/performance.md ("Out-of-core I/O").
#pragma once

#include <mpi.h>

#include <tessera/out_of_core.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "core/backend.hpp"
#include "core/reduction.hpp"
#include "core/timers.hpp"
#include "io/dataset_ref.hpp"
#include "io/h5_file.hpp"
#include "io/h5_matrix.hpp"
#include "io/provenance.hpp"
#include "mpi/transpose_plan.hpp"

namespace tessera::ops {

inline constexpr std::size_t kDefaultMemoryLimit = std::size_t{256} << 20;

// How an out-of-core transpose cuts the M × N input into chunks. Either way one side of the
// file I/O is one contiguous stretch per chunk and the other is a run per row of the chunk:
//   RowSlabs      H whole input rows: contiguous reads; the output's column block, N runs of H.
//   ColumnPanels  W whole input columns: M runs of W read; the output's rows, contiguous writes.
enum class ChunkShape { RowSlabs, ColumnPanels };
const char* chunk_shape_name(ChunkShape s) noexcept; // "rows", "columns"
ChunkShape parse_chunk_shape(const std::string& s);  // InputError naming the choices

// The library's options (tessera/out_of_core.hpp), and those of tessera's own tools:
//   memory_limit   host memory per rank for the chunk buffers in flight and the transpose's
//                  exchange buffers; 0: kDefaultMemoryLimit. The chunk size follows from it
//                  unless chunk_rows (chunk_cols for a transpose in column panels) or chunk_bytes
//                  is set.
//   staging_depth  chunks in flight per direction besides the one being computed: the
//                  read-ahead and the write-behind depth (>= 1); each extra level costs one chunk
//                  buffer per direction.
//   backend        kernels of the transpose and the reductions. Chunks stay in host memory;
//                  with the CUDA backend each goes through the GPU (host -> device -> host) as it
//                  is computed.
//   exchange       the transpose's exchange algorithm.
struct OutOfCoreOptions : tessera::OutOfCoreOptions {
  // Input rows per chunk (reductions; transposes in row slabs), over all ranks together; 0: as
  // many as memory_limit allows.
  // ResourceError when the chunks this gives do not fit memory_limit.
  std::int64_t chunk_rows = 0;
  // Transpose: the chunk shape, and with column panels the input columns per chunk (0: as many
  // as memory_limit allows). Column panels by default: contiguous writes measured faster than
  // contiguous reads (docs/performance.md).
  ChunkShape chunk_shape = ChunkShape::ColumnPanels;
  std::int64_t chunk_cols = 0;
  // Input bytes per chunk, all ranks together, when chunk_rows (chunk_cols for column panels)
  // is 0: the chunk gets as many whole rows (columns) as fit, at least one. 0: as large as
  // memory_limit allows. ResourceError when such chunks do not fit an explicit memory_limit.
  std::size_t chunk_bytes = 0;

  io::WriteOptions write{};                   // output layout: chunked, deflate
  const io::Provenance* provenance = nullptr; // written on the output's root when set
  // String attributes of the output dataset (transpose), e.g. {"transpose_of", "a.h5:/A"}.
  std::vector<std::pair<std::string, std::string>> dataset_attributes;
  // Transpose: called on the I/O thread with the output file just before it is committed, to
  // add more to it (the pipeline job's reductions). Collective, like any HDF5 write.
  std::function<void(io::H5File&)> before_commit;
  int io_cpu = -1; // pin the I/O thread to this CPU (-1: don't)
  // Transpose: add the dataset to an existing output file (H5File::Mode::Append) instead of
  // replacing it.
  bool append = false;
  // Reductions: elements to skip and packed values to decode (tessera/reduction.hpp), usually
  // from the dataset's attributes (io/missing_values.hpp). Packed integer datasets are read as
  // f64 when `missing` is packed.
  MissingValues missing{};

  // Deliberate delays per chunk, to show and test the overlap (benchmarks, tests). Negative:
  // from the environment, TESSERA_IO_DELAY_MS / TESSERA_COMPUTE_DELAY_MS (default 0).
  double io_delay_ms = -1.0;      // added to the I/O thread's work on each chunk
  double compute_delay_ms = -1.0; // added to compute's work on each chunk
  // Fault injection for tests, "SIDE:rank=R:chunk=C" with SIDE read, write or compute, e.g.
  // "read:rank=1:chunk=3". Empty: from the environment, TESSERA_FAULT (unset: none); "none":
  // none, whatever the environment says (the library's calls).
  std::string fault;
  // Test hook: called on the I/O thread of every rank right after chunk `chunk` of the input
  // has been read, before the input is checked for changes (tests change it here).
  std::function<void(std::int64_t chunk)> after_read;

  bool progress = true;           // rank 0 logs bytes done/total, GB/s and ETA
  double progress_interval = 2.0; // seconds between progress lines
  PhaseTimers* timers = nullptr;  // phases of this rank are added here when set
};

// What a run did on this rank (the pipeline's own view; timers hold the per-phase detail).
struct OutOfCoreReport {
  std::int64_t chunks = 0;
  ChunkShape chunk_shape = ChunkShape::RowSlabs;
  std::int64_t chunk_rows = 0;  // input rows per chunk, all ranks together
  std::int64_t chunk_cols = 0;  // input columns per chunk
  std::size_t buffer_bytes = 0; // chunk and exchange buffers allocated on this rank
  // Transpose to compressed output: counted within the memory limit for the whole chunks HDF5
  // holds while it compresses them (at most this much, on the rank that owns them).
  std::size_t hdf5_staging_bytes = 0;
  double seconds = 0.0;           // wall time of the whole call
  double bytes_read = 0.0;        // by this rank
  double bytes_written = 0.0;     // by this rank
  double io_seconds = 0.0;        // the I/O thread's reads and writes (delays included)
  double compute_seconds = 0.0;   // compute and exchange (delays included)
  double compute_waited_io = 0.0; // compute blocked on the queues from the I/O thread
  double io_waited_compute = 0.0; // the I/O thread blocked on the queues from compute
  Backend backend = Backend::Cpu; // the kernels that computed the chunks (resolved)

  // "32 chunks of 256 rows" (row slabs) or "32 chunks of 256 columns" (column panels).
  std::string chunks_str() const;
};

// Collective. Writes the transpose of `in` (M×N) to `out` (N×M, same element type), creating
// out.file (under a temporary name until complete; an existing file is replaced) — it must not be
// in.file.
OutOfCoreReport transpose_out_of_core(const io::DatasetRef& in, const io::DatasetRef& out,
                                      const OutOfCoreOptions& options, MPI_Comm comm);

// Collective. The reductions `ops` of `in` (f32 or f64) along `axis`; the same values on every
// rank. `report`, when set, receives what the run did.
ReduceResult reduce_out_of_core(const io::DatasetRef& in, const std::vector<Op>& ops, Axis axis,
                                const OutOfCoreOptions& options, MPI_Comm comm,
                                OutOfCoreReport* report = nullptr);

} // namespace tessera::ops
