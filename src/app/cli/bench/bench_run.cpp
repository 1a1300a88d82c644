// Which `tessera bench` driver runs: by backend, rank count and where the data lives.
#include "cli/bench/bench.hpp"
#include "cli/bench/bench_drivers.hpp"
#include "core/throw.hpp"
#include "cuda/device.hpp"
#include "mpi/agreement.hpp"
#include "mpi/communicator.hpp"

namespace tessera::app {

BenchReport run_cpu_bench(const BenchArgs& args) {
  const int nranks = mpi::comm_size(args.comm);
  switch (args.kind) {
  case BenchKind::Transpose:
    return nranks == 1 ? bench::local_transpose_cpu(args) : bench::distributed_transpose(args);
  case BenchKind::Exchange:
    return bench::distributed_transpose(args);
  case BenchKind::Redistribute:
    return bench::distributed_redistribute(args);
  case BenchKind::Heat2d:
    TESSERA_THROW(InputError, "bench heat2d measures the one-GPU tile step: --backend cuda");
  case BenchKind::Permute:
    TESSERA_REQUIRE(nranks == 1, InputError, "bench permute measures the local kernel: one rank");
    return bench::local_permute_cpu(args);
  case BenchKind::Reduce:
    break;
  }
  return nranks == 1 ? bench::local_reduce_cpu(args) : bench::distributed_reduce(args);
}

BenchReport run_cuda_bench(const BenchArgs& args) {
  if (!cuda::compiled())
    TESSERA_THROW(NotCompiled, "the CUDA benchmark is not available in this build (built "
                               "without CUDA)");
  const int nranks = mpi::comm_size(args.comm);
  mpi::collectively(args.comm, [] { cuda::ensure_device_bound(); });
  switch (args.kind) {
  case BenchKind::Transpose:
    if (nranks > 1)
      return bench::distributed_transpose(args);
    return args.memory == Memory::Device ? bench::local_transpose_device(args)
                                         : bench::local_transpose_staged(args);
  case BenchKind::Exchange:
    return bench::distributed_transpose(args);
  case BenchKind::Redistribute:
    return bench::distributed_redistribute(args); // refuses the CUDA backend
  case BenchKind::Heat2d:
    TESSERA_REQUIRE(nranks == 1 && args.memory == Memory::Device, InputError,
                    "bench heat2d measures the one-GPU tile step: one rank, device memory");
    return bench::local_heat2d_tiles_device(args);
  case BenchKind::Permute:
    TESSERA_REQUIRE(nranks == 1 && args.memory == Memory::Device, InputError,
                    "bench permute measures the local kernel: one rank, device memory");
    return bench::local_permute_device(args);
  case BenchKind::Reduce:
    break;
  }
  return nranks == 1 && args.memory == Memory::Device ? bench::local_reduce_device(args)
                                                      : bench::distributed_reduce(args);
}

} // namespace tessera::app
