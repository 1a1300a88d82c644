// Redistribution between any two layouts: B = beta·B + alpha·op(A), op = none, transpose or
// conjugate transpose, on sub-matrices as ScaLAPACK's pdgemr2d/pdtran take them. Build once
// (collectively), execute many times.
//
//   RedistributePlan plan(Layout::row_blocks({M, N}, P), Layout::block_cyclic(spec), DType::f64,
//                         comm, {.op = MatrixOp::Transpose});
//   plan.execute(a_local, b_local);  // host pointers, each rank's local blocks
//
//   RedistributePlan gpu(a, b, DType::f64, comm, Backend::Cuda, {.memory = Memory::Device});
//   gpu.execute(d_a, d_b);           // device pointers: the same result, bit for bit
//
// The plan intersects the two layouts' block boundaries once: for every pair of ranks, the
// rectangles one holds of op(A) and the other of B. Each execute packs the rectangles per
// destination (OpenMP), exchanges them in one all-to-all and unpacks them, applying the
// transpose, conjugation and scaling while unpacking; the rectangles a rank keeps are copied
// straight from A to B. Each rank sends exactly the elements of op(A) it holds that another
// rank holds in B. Its send and receive buffers together stay within one local block (see
// RedistributeOptions::max_buffer_bytes): where the whole exchange would need more, it goes in
// rounds, each an all-to-all of a part of every message. With `relabel` the plan may renumber
// B's owners so that less moves (see RedistributeOptions::relabel); otherwise ranks keep their
// numbers.
//
// On the CUDA backend with blocks in device memory (RedistributeOptions::memory), the GPU packs
// and unpacks (op, alpha and beta applied there); the packed messages cross ranks through pinned
// host buffers, so MPI need not be CUDA-aware. Blocks in host memory take the CPU path on either
// backend.
#pragma once

#include <mpi.h>

#include <complex>
#include <cstdint>
#include <memory>
#include <vector>

#include <tessera/backend.hpp>
#include <tessera/dtype.hpp>
#include <tessera/export.h>
#include <tessera/layout.hpp>

namespace tessera {

enum class MatrixOp { None, Transpose, ConjTranspose };

struct RedistributeOptions {
  MatrixOp op = MatrixOp::None;
  // Real element types use the real parts. beta = 0 never reads B (it may hold NaN).
  std::complex<double> alpha = 1.0;
  std::complex<double> beta = 0.0;
  // The sub-matrices (0-based corners): B(b_row : b_row + rows, b_col : b_col + cols) and the
  // matching corner of A, whose extent is rows × cols, or cols × rows under a transpose.
  // rows, cols < 0: the whole of B from its corner.
  std::int64_t a_row = 0, a_col = 0, b_row = 0, b_col = 0;
  std::int64_t rows = -1, cols = -1;
  // Let the plan write B in B's layout with its owners permuted, chosen so that each rank keeps
  // as much of op(A) as it can (a layout differing from A's by a permutation of ranks then
  // moves nothing); target() and relabelling() say who holds what. Only for the whole of B
  // with beta = 0: B's old values stay on their ranks and cannot follow.
  bool relabel = false;
  // The most bytes this rank's send and receive buffers may hold together. 0: the larger of its
  // local blocks of A and of B (rows × cols of local_shape(), in the target layout for B). The
  // exchange is split into as many rounds as the rank needing most asks for (chosen when the
  // plan is built), one all-to-all each; one round where everything fits. A rank may exceed
  // the bound only where it is below one element per rank it exchanges with (a rank holding
  // nothing needs no buffer at all). Smaller values trade memory for more, smaller messages
  // (and the plan keeps a few integers per round and rank); each rank may pass its own.
  std::int64_t max_buffer_bytes = 0;
  // Where execute()'s blocks live. Device: the CUDA backend's GPU path (a and b device pointers
  // on the rank's GPU; the buffers above are then device memory, plus as much pinned host
  // memory for the messages). Host: the CPU path, on either backend.
  Memory memory = Memory::Host;
};

// What one execute moves on this rank, in bytes, and the memory it moves it through.
struct RedistributeTraffic {
  std::int64_t sent = 0;     // to other ranks
  std::int64_t received = 0; // from other ranks
  std::int64_t kept = 0;     // copied locally
  // The least this rank must send: the elements of op(A)'s window it holds that it does not
  // hold in B's window (sent equals it: no element travels twice or to a rank that has it).
  std::int64_t sent_lower_bound = 0;
  // The send plus receive buffers the plan holds on this rank (what execute needs beyond A and
  // B), and the rounds each execute exchanges in (the same on every rank).
  std::int64_t buffer_bytes = 0;
  std::int64_t rounds = 1;
};

class TESSERA_API RedistributePlan {
public:
  // Collective over comm; a.nranks() and b.nranks() must be comm's size. Backend::Auto, and the
  // constructor without a backend: for blocks in host memory the CPU backend (without asking
  // the CUDA driver anything), for blocks in device memory the CUDA backend. Backend::Cuda
  // where some rank has no usable GPU, or device memory on the CPU backend (or without a GPU),
  // raise InputError on every rank; NotCompiled in a build without CUDA.
  RedistributePlan(const Layout& a, const Layout& b, DType dtype, MPI_Comm comm,
                   RedistributeOptions options = {});
  RedistributePlan(const Layout& a, const Layout& b, DType dtype, MPI_Comm comm, Backend backend,
                   RedistributeOptions options = {});
  ~RedistributePlan();
  RedistributePlan(RedistributePlan&&) noexcept;
  RedistributePlan& operator=(RedistributePlan&&) noexcept;

  // Collective. a: this rank's local block of A, b: of B (either may be null where the rank
  // holds nothing of it); they must not overlap. Device pointers with Memory::Device: execute
  // first waits for the work queued on the legacy default stream (which may be writing them),
  // and returns when B is complete.
  void execute(const void* a, void* b);
  template <class T>
  void execute(const T* a, T* b) {
    execute_as(dtype_of<T>, static_cast<const void*>(a), static_cast<void*>(b), options_alpha(),
               options_beta());
  }
  // The same with other scalars than the options' (B = beta·B + alpha·op(A)) for this execute
  // only: one plan serves any alpha and beta.
  void execute(const void* a, void* b, std::complex<double> alpha, std::complex<double> beta);

  DType dtype() const noexcept;
  Backend backend() const noexcept; // resolved: never Auto
  Memory memory() const noexcept;
  const RedistributeTraffic& traffic() const noexcept;
  // The layout execute writes B in: B's own, or with relabel B's with owner r replaced by
  // relabelling()[r] (tight local blocks unless that is the identity). Each rank's b must hold
  // its local block of this layout.
  const Layout& target() const noexcept;
  // relabelling()[r]: the rank that holds, in target(), what B's layout gives rank r (the
  // identity without relabel).
  const std::vector<int>& relabelling() const noexcept;

private:
  void execute_as(DType t, const void* a, void* b, std::complex<double> alpha,
                  std::complex<double> beta);
  std::complex<double> options_alpha() const noexcept;
  std::complex<double> options_beta() const noexcept;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

} // namespace tessera
