// Distributed reductions over a row-distributed matrix (f32/f64 data, f64 accumulation).
//
//   ReducePlan rp(dist, DType::f64, comm, Backend::Cpu, {Op::Sum, Op::Norm2}, Axis::All);
//   ReduceResult r = rp.execute(block);   // the same values on every rank
//
// The Sum family follows the canonical order of core/reduction.hpp: bit-identical results for
// any rank count, OMP_NUM_THREADS and backend (see mpi/reduce_chain.hpp for how blocks cut by
// rank boundaries are continued). f64 norms whose sum of squares overflowed or underflowed are
// recomputed by the Norm2 rescue of core/reduction.hpp: accurate, and just as reproducible.
// Along Cols, each rank keeps the column partials of its whole
// row blocks until the chain reaches it: cols × ⌈rows/64⌉ doubles, 1/8 of its f64 block.
#pragma once

#include <mpi.h>

#include <memory>
#include <vector>

#include "core/backend.hpp"
#include "core/block_distribution.hpp"
#include "core/dtype.hpp"
#include "core/reduction.hpp"
#include "core/timers.hpp"

namespace tessera {

struct ReduceOptions {
  Memory memory = Memory::Host; // where execute()'s block lives (CUDA backend)
  // Optional: each execute adds a "reduce.execute" phase (bytes read) here when set.
  PhaseTimers* timers = nullptr;
};

class ReducePlan {
public:
  // Collective over comm.
  ReducePlan(const BlockDistribution& dist, DType dtype, MPI_Comm comm, Backend backend,
             std::vector<Op> ops, Axis axis, ReduceOptions options = {});
  ~ReducePlan();
  ReducePlan(ReducePlan&&) noexcept;
  ReducePlan& operator=(ReducePlan&&) noexcept;

  // Collective. `block` is this rank's dist.rows(rank) × cols, row-major.
  ReduceResult execute(const void* block);

  Backend backend() const noexcept; // resolved: never Auto
  // Bytes this rank reads per execute: its block once per distinct kernel pass (Mean shares
  // Sum's pass), not counting the passes of a Norm2 rescue.
  double bytes_read() const noexcept;

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

} // namespace tessera
