// Distributed reductions over a row-distributed matrix, or one in any layout (f32/f64 data, f64
// accumulation).
//
//   ReducePlan rp(dist, DType::f64, comm, Backend::Cpu, {Op::Sum, Op::Norm2}, Axis::All);
//   ReduceResult r = rp.execute(block);   // the same values on every rank
//
// The Sum family follows one fixed summation order: bit-identical results for any rank count,
// OMP_NUM_THREADS, backend and layout. f64 norms whose sum of squares overflowed or underflowed are
// recomputed with scaling: accurate, and just as reproducible. Along Cols, each rank keeps the
// column partials of its whole row blocks: cols × ⌈rows/64⌉ doubles, 1/8 of its f64 block.
// Any MPI thread level suffices (only the calling thread calls MPI).
#pragma once

#include <mpi.h>

#include <memory>
#include <vector>

#include <tessera/backend.hpp>
#include <tessera/block_distribution.hpp>
#include <tessera/dtype.hpp>
#include <tessera/export.h>
#include <tessera/layout.hpp>
#include <tessera/reduction.hpp>

namespace tessera {

// Per-phase timers (internal; tessera's own tools pass them, applications leave them null).
class PhaseTimers;

struct ReduceOptions {
  Memory memory = Memory::Host; // where execute()'s block lives (CUDA backend)
  // Optional: each execute adds a "reduce.execute" phase (bytes read) here when set.
  PhaseTimers* timers = nullptr;
  // Elements to skip and packed values to decode (tessera/reduction.hpp); the default skips
  // nothing. Anything to skip needs the block in host memory and costs a copy of the block
  // for each execute where something is skipped. {.missing = {.skip_nan = true}} is what
  // numpy's nansum, nanmin, … compute.
  MissingValues missing{};
};

class TESSERA_API ReducePlan {
public:
  // Collective over comm.
  ReducePlan(const BlockDistribution& dist, DType dtype, MPI_Comm comm, Backend backend,
             std::vector<Op> ops, Axis axis, ReduceOptions options = {});
  // Collective over comm (layout.nranks() must be its size): the matrix in any layout, and the
  // same values, bit for bit, as the plan above over the same matrix in row blocks. Each execute
  // redistributes the block to row blocks (RedistributePlan) and reduces those. Extra memory per
  // rank, held by the plan: one row block (at most ⌈rows / P⌉ × cols elements), and the
  // redistribution's send and receive buffers (the elements that travel: at most the local
  // block out and the row block in). A layout that is row blocks already, with tight row-major
  // local blocks (Layout::row_blocks), moves nothing and holds nothing. The redistribution runs in
  // host memory: a layout that needs one takes its local block in host memory (options.memory =
  // Memory::Host, or InputError) and the CUDA backend then reduces the row block from host memory,
  // as for any host block.
  ReducePlan(const Layout& layout, DType dtype, MPI_Comm comm, Backend backend, std::vector<Op> ops,
             Axis axis, ReduceOptions options = {});
  ~ReducePlan();
  ReducePlan(ReducePlan&&) noexcept;
  ReducePlan& operator=(ReducePlan&&) noexcept;

  // Collective. `block` is this rank's dist.rows(rank) × cols, row-major, or its local block of
  // the layout the plan was built with. The ranks agree on it before any collective step: a
  // null block on a rank that holds elements raises InputError on every rank
  // (tessera/agreement.hpp).
  ReduceResult execute(const void* block);

  Backend backend() const noexcept; // resolved: never Auto
  // Bytes this rank reads per execute: its block once, every op from one read, on either
  // backend; not counting the passes of a Norm2 rescue nor a layout's redistribution (its row
  // block is what is read).
  double bytes_read() const noexcept;

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

} // namespace tessera
