// Distributed permutation of dimensions (numpy's transpose(axes)) of a row-major N-D array of
// rank 1 to 8 and any element type: output dimension k is input dimension axes[k]. The input is
// split along its outermost dimension over the ranks, the output along its own outermost
// dimension, both in BlockDistribution's blocks (sizes differ by at most one; ranks with none
// are legal). Build once, execute many times.
//
//   PermutePlan plan({A, B, C}, {2, 0, 1}, DType::f64, comm);    // (A, B, C) -> (C, A, B)
//   plan.execute(in_block, out_block);
//
// in_block: this rank's input block, input_block().shape = (its rows of A, B, C), row-major.
// out_block: this rank's output block, output_block().shape = (its rows of C, A, B).
// Any MPI thread level suffices (only the calling thread calls MPI).
#pragma once

#include <mpi.h>

#include <climits>
#include <cstdint>
#include <memory>
#include <vector>

#include <tessera/backend.hpp>
#include <tessera/dtype.hpp>
#include <tessera/export.h>

namespace tessera {

struct PermuteOptions {
  // Where execute()'s pointers live for the CUDA backend: host memory is permuted on the GPU
  // through a copy there and back; device memory stays there (pieces for other ranks travel
  // through pinned host buffers). The CPU backend takes host memory only.
  Memory memory = Memory::Host;
  // Messages longer than this many elements travel as derived datatypes (MPI counts are int).
  // At least 2; only tests lower it, to exercise that path with small arrays.
  std::int64_t message_limit = INT_MAX;
};

// One rank's block: indices [begin, begin + length) of the outermost dimension, with every index
// of the others; `shape` is (length, the global shape's other lengths).
struct PermuteBlock {
  std::int64_t begin = 0;
  std::int64_t length = 0;
  std::int64_t elements = 0;
  std::vector<std::int64_t> shape;
};

class TESSERA_API PermutePlan {
public:
  // Collective over comm. `shape` is the global input's shape and `axes` a permutation of
  // 0 … rank-1; every rank passes the same shape, axes and dtype (InputError on every rank
  // otherwise, as for a bad permutation).
  PermutePlan(std::vector<std::int64_t> shape, std::vector<int> axes, DType dtype, MPI_Comm comm,
              Backend backend = Backend::Auto, PermuteOptions options = {});
  ~PermutePlan();
  PermutePlan(PermutePlan&&) noexcept;
  PermutePlan& operator=(PermutePlan&&) noexcept;

  // Collective. `in` and `out` must not overlap. The ranks agree on the arguments before any
  // collective step: a null block on a rank that holds elements raises InputError on every
  // rank (tessera/agreement.hpp).
  void execute(const void* in, void* out);
  // The same, typed: an element type other than the plan's, on any rank, raises InputError on
  // every rank.
  template <class T>
  void execute(const T* in, T* out) {
    execute_as(dtype_of<T>, static_cast<const void*>(in), static_cast<void*>(out));
  }

  const std::vector<std::int64_t>& input_shape() const noexcept;  // global
  const std::vector<std::int64_t>& output_shape() const noexcept; // global: input_shape[axes[k]]
  const std::vector<int>& axes() const noexcept;
  // This rank's blocks, and any rank's (0 <= rank < the communicator's size).
  const PermuteBlock& input_block() const noexcept;
  const PermuteBlock& output_block() const noexcept;
  PermuteBlock input_block(int rank) const;
  PermuteBlock output_block(int rank) const;
  DType dtype() const noexcept;
  Backend backend() const noexcept; // resolved: never Auto
  Memory memory() const noexcept;
  // Whether execute exchanges data between ranks: not on one rank, nor when the outermost
  // dimension stays outermost (axes[0] == 0), where each rank permutes its own block.
  bool exchanges() const noexcept;

private:
  void execute_as(DType t, const void* in, void* out);
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

} // namespace tessera
