// The `tessera bench` drivers, one per operation and placement; bench_run.cpp picks one from the
// backend, the rank count and where the data lives. Each runs on every rank of args.comm.
#pragma once

#include "cli/bench/bench.hpp"

namespace tessera::app::bench {

// One rank, CPU backend: the OpenMP kernels beside memcpy / a streaming read (bench_transpose.cpp,
// bench_reduce.cpp).
BenchReport local_transpose_cpu(const BenchArgs& args);
BenchReport local_reduce_cpu(const BenchArgs& args);
// One rank, CUDA backend (bench_cuda.cpp): device-resident data beside a D2D copy, cuBLAS geam
// and the textbook tile, or cub; host data staged through the GPU.
BenchReport local_transpose_device(const BenchArgs& args);
BenchReport local_transpose_staged(const BenchArgs& args);
BenchReport local_reduce_device(const BenchArgs& args);
BenchReport local_heat2d_tiles_device(const BenchArgs& args);
// One rank, either backend (bench_permute.cpp): the permutation of dimensions beside a copy of
// the same bytes (memcpy on the host, a D2D copy on the GPU).
BenchReport local_permute_cpu(const BenchArgs& args);
BenchReport local_permute_device(const BenchArgs& args);
// Several ranks (or `exchange`), either backend: the distributed TransposePlan and ReducePlan.
BenchReport distributed_transpose(const BenchArgs& args);
BenchReport distributed_reduce(const BenchArgs& args);
// Any rank count, CPU backend: RedistributePlan between args.from and args.to.
BenchReport distributed_redistribute(const BenchArgs& args);

} // namespace tessera::app::bench
