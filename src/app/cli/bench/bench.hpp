// `tessera bench`: what a benchmark is asked to do (BenchArgs) and what it measured
// (BenchReport). cmd_bench.cpp parses the command line and prints reports; bench_run.cpp picks
// the driver (bench_drivers.hpp): one per operation, taking the backend from the arguments.
//
// Conventions every driver follows:
//  - GB/s = (bytes read + bytes written) / median time over the timed repeats (1 GB = 1e9 B);
//    reductions only read.
//  - The reference ceiling is measured in the same run, with the same threads and bytes:
//    memcpy (read + written) for transposes and exchanges, a streaming read for reductions. On
//    the GPU: a device-to-device cudaMemcpy ("copy") for transposes and exchanges,
//    cub::DeviceReduce::Sum ("cub") for reductions, with cuBLAS geam and the textbook tile
//    transpose timed beside the transpose (same process, alternating repeats), and for
//    host-resident data staged through the GPU the slowest of its phases (H2D, kernel, D2H) run
//    alone ("slowest phase").
//  - With several ranks every repeat starts after a barrier and its time is the slowest rank's.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/backend.hpp"
#include "core/dtype.hpp"
#include "core/reduction.hpp"

namespace tessera::app {

enum class BenchKind {
  Transpose,    // one rank: the local kernel; several ranks: the distributed TransposePlan
  Reduce,       // one rank: the local kernels; several ranks: the distributed ReducePlan
  Exchange,     // the distributed TransposePlan at any rank count, time split by phase
  Redistribute, // RedistributePlan between two layouts (BenchArgs::from, to), CPU backend
  Heat2d,       // one GPU: a step of the heat2d tile path (rows = ny, cols = nx), CUDA backend
  Permute       // one rank: the permutation of dimensions (BenchArgs::shape, axes), either backend
};

struct BenchArgs {
  BenchKind kind = BenchKind::Transpose;
  Backend backend = Backend::Cpu; // resolved: Cpu or Cuda
  std::int64_t rows = 0, cols = 0;
  DType dtype = DType::f64;
  int repeat = 10;
  int warmup = 2;
  std::vector<Op> ops{Op::Sum};
  Axis axis = Axis::All;
  std::string algorithm = "auto"; // exchange algorithm for the distributed transpose
  bool check = true;              // verify the result once after timing
  bool shared_input = false;      // distributed transpose: input in TransposePlan::input_buffer()
  Memory memory = Memory::Host;   // where the data lives (CUDA backend; Cpu: always Host)
  bool variants = false;          // CUDA local transpose, heat2d: also time the comparison kernels
  std::size_t chunk_bytes = 0;    // host-staged CUDA transpose: bytes per chunk (0: its default)
  std::string from = "rows", to = "cols"; // redistribute: the layouts (bench_redistribute.cpp)
  bool transpose = false;                 // redistribute: B = Aᵀ
  std::vector<std::int64_t> shape;        // permute: the input's shape (rows × cols: its product)
  std::vector<int> axes;                  // permute: output dimension k is input dimension axes[k]
  MPI_Comm comm = MPI_COMM_WORLD;
};

// Seconds of one execute (max over ranks), over the timed repeats.
struct BenchTiming {
  double median = 0, min = 0, max = 0;
};
// Orders `seconds` and takes median, min and max.
BenchTiming summarize(std::vector<double> seconds);

struct BenchPhase {
  std::string name;
  double seconds = 0; // per execute, max over ranks
  double bytes = 0;   // per execute, summed over ranks (0 when the phase does not count bytes)
};

struct BenchReport {
  std::string what;    // "transpose (local kernel)", "transpose (distributed, alltoallv)", …
  std::string backend; // "cpu", "cuda"
  std::string device;  // "2 OpenMP threads", GPU name, …
  std::int64_t rows = 0, cols = 0;
  DType dtype = DType::f64;
  int ranks = 1, threads = 1, repeat = 0, warmup = 0;
  BenchTiming time;
  double bytes_per_rank = 0; // per execute, read + written (largest rank)
  double bytes_total = 0;    // per execute, summed over ranks
  double gbps = 0;           // bytes_total / median time
  double gbps_per_rank = 0;  // gbps / ranks
  std::string reference;     // "memcpy" or "read"
  double reference_gbps = 0; // same bytes, threads and ranks, measured in the same run
  double fraction = 0;       // gbps / reference_gbps
  std::string checked;       // "yes", "no (skipped)", or what did not match
  std::vector<BenchPhase> phases;
  std::vector<std::string> notes;
  std::string memory;    // "host" or "device": where the benchmarked data lives
  std::string algorithm; // distributed transpose: the exchange algorithm used ("" otherwise)
  std::string kernel;    // CUDA local transpose, permute: the kernel the shape got ("" otherwise)
  std::vector<std::int64_t> shape; // permute: the input's shape and the axes ({} otherwise)
  std::vector<int> axes;
  // Further named figures of the run, as JSON fields ("geam_gbps", "cub_gbps", …); the table
  // shows them through the notes.
  std::vector<std::pair<std::string, double>> extras;
};

// Runs on every rank of args.comm (collective); the report is complete on every rank.
BenchReport run_cpu_bench(const BenchArgs& args);
// The CUDA counterpart; throws NotCompiled when the build has no CUDA backend.
BenchReport run_cuda_bench(const BenchArgs& args);

} // namespace tessera::app
