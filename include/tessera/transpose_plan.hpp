// Distributed transpose: row-distributed M×N (BlockDistribution({M,N}, P)) → row-distributed
// N×M (BlockDistribution({N,M}, P)). Build once, execute many times.
//
//   TransposePlan plan(dist, DType::f64, comm, Backend::Auto, {.algorithm = Exchange::Auto});
//   plan.execute(in_block, out_block);  // host pointers (Cpu) or device pointers (Cuda)
//
// in_block: this rank's rows of A, row-major, dist.rows(rank) × N.
// out_block: this rank's rows of Aᵀ, row-major, dist.transposed().rows(rank) × M.
// (Both stored by columns instead with TransposeOptions::column_major.)
// Any MPI thread level suffices (only the calling thread calls MPI).
#pragma once

#include <mpi.h>

#include <climits>
#include <cstdint>
#include <memory>
#include <string_view>

#include <tessera/backend.hpp>
#include <tessera/block_distribution.hpp>
#include <tessera/dtype.hpp>
#include <tessera/exchange.hpp>
#include <tessera/export.h>

namespace tessera {

// Per-phase timers (internal; tessera's own tools pass them, applications leave them null).
class PhaseTimers;

struct TransposeOptions {
  Exchange algorithm = Exchange::Auto;
  // Where execute()'s pointers live for the CUDA backend (host-resident data is staged
  // through the stream pool in chunks).
  Memory memory = Memory::Host;
  // How the blocks are stored. Row-major (false): in is in.rows(rank) × N and out is
  // out.rows(rank) × M, row-major. Column-major (true): the same blocks stored by columns, i.e.
  // in is N × in.rows(rank) and out is M × out.rows(rank) row-major (data whose lines are
  // columns, as in the heat2d GPU solver, or Fortran-ordered blocks). Then each piece leaves
  // as a contiguous run of the input, without packing, and is transposed once on arrival: every
  // element is read and written once, where the row-major plan transposes while packing and
  // copies again while unpacking.
  bool column_major = false;
  // Optional: phases (transpose.pack, .self, .exchange, .unpack, .autotune) are accumulated
  // here when set.
  PhaseTimers* timers = nullptr;
  // Messages longer than this many elements travel as derived datatypes (MPI counts are int).
  // At least 2; only tests lower it, to exercise that path with small matrices.
  std::int64_t message_limit = INT_MAX;
};

class TESSERA_API TransposePlan {
public:
  // Collective over comm. Throws on every rank if the plan cannot be built on any rank
  // (Exchange::Nccl without the CUDA backend, without NCCL in the build, or with ranks that
  // share a GPU included).
  TransposePlan(const BlockDistribution& in, DType dtype, MPI_Comm comm,
                Backend backend = Backend::Auto, TransposeOptions options = {});
  // Collective when the ranks share a node (the plan frees its shared-memory window), except
  // while an exception unwinds.
  ~TransposePlan();
  TransposePlan(TransposePlan&&) noexcept;
  TransposePlan& operator=(TransposePlan&&) noexcept;

  // Collective. `in` and `out` must not overlap. The ranks agree on the arguments before any
  // collective step: a null block on a rank that has rows raises InputError on every rank
  // (tessera/agreement.hpp).
  void execute(const void* in, void* out);
  // Collective. A buffer for this rank's input block (input_distribution().rows(rank) × N
  // elements) in node-shared memory, allocated on the first call. When every rank passes its
  // input_buffer() to execute(), each rank transposes its output rows straight out of the
  // others' blocks: no packing, no messages, no second copy (reported as SharedMemory).
  // nullptr when the ranks are on several nodes or the backend cannot read host memory of
  // other ranks; execute() then takes any input as usual.
  void* input_buffer();
  // The same, typed: an element type other than the plan's, on any rank, raises InputError on
  // every rank.
  template <class T>
  void execute(const T* in, T* out) {
    execute_as(dtype_of<T>, static_cast<const void*>(in), static_cast<void*>(out));
  }

  const BlockDistribution& input_distribution() const noexcept;
  const BlockDistribution& output_distribution() const noexcept;
  DType dtype() const noexcept;
  Backend backend() const noexcept; // resolved: never Auto
  // Resolved after the first execute when Auto: that execute runs each algorithm once, timed,
  // and keeps the fastest (slowest rank decides). A single rank exchanges nothing: Alltoallv.
  // A direct execute (see input_buffer()) resolves Auto to SharedMemory.
  Exchange algorithm() const noexcept;
  // Bytes this rank reads + writes per execute (for GB/s).
  double bytes_moved() const noexcept;

private:
  void execute_as(DType t, const void* in, void* out);
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

} // namespace tessera
