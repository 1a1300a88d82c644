// A row-distributed matrix: the global distribution, the communicator it is spread over, this
// rank's block of rows and where that block lives. Host storage for now.
//
//   DistMatrix<double> a(BlockDistribution({M, N}, comm_size), comm);
//   a(i, j) = …;                         // local row i (global row a.row_begin() + i), column j
//   plan.execute(a.data(), at.data());   // plans take the raw block
#pragma once

#include <mpi.h>

#include <cstdint>
#include <new>
#include <span>
#include <vector>

#include "core/backend.hpp"
#include "core/block_distribution.hpp"
#include "core/dtype.hpp"
#include "core/throw.hpp"

namespace tessera {

template <class T>
class DistMatrix {
public:
  // Allocates this rank's block (zero-filled). Not collective; the communicator is not owned
  // and must outlive the matrix. Throws InputError when the distribution is over another number
  // of ranks than comm, NotCompiled for device memory, ResourceError when memory runs out.
  DistMatrix(const BlockDistribution& dist, MPI_Comm comm, Memory memory = Memory::Host)
      : dist_(dist), comm_(comm), memory_(memory) {
    int size = 0;
    TESSERA_REQUIRE(MPI_Comm_rank(comm, &rank_) == MPI_SUCCESS &&
                        MPI_Comm_size(comm, &size) == MPI_SUCCESS,
                    InputError, "DistMatrix: invalid communicator");
    TESSERA_REQUIRE(dist.nranks() == size, InputError,
                    "DistMatrix: the distribution is over {} ranks but the communicator has {}",
                    dist.nranks(), size);
    TESSERA_REQUIRE(memory == Memory::Host, NotCompiled,
                    "DistMatrix: device-resident matrices are not available yet");
    const std::int64_t n = dist.local_size(rank_);
    try {
      block_.resize(static_cast<std::size_t>(n));
    } catch (const std::bad_alloc&) {
      TESSERA_THROW(ResourceError,
                    "cannot allocate {} bytes for the local {} block of a {} {} matrix",
                    static_cast<double>(n) * sizeof(T), local_shape().str(), global_shape().str(),
                    dtype_name(dtype_of<T>));
    }
  }

  const BlockDistribution& distribution() const noexcept { return dist_; }
  MPI_Comm comm() const noexcept { return comm_; }
  int rank() const noexcept { return rank_; }
  Memory memory() const noexcept { return memory_; }
  static constexpr DType dtype() noexcept { return dtype_of<T>; }

  Shape global_shape() const noexcept { return dist_.global(); }
  Shape local_shape() const noexcept { return dist_.local_shape(rank_); }
  // Global rows [row_begin(), row_end()) live here.
  std::int64_t row_begin() const noexcept { return dist_.begin(rank_); }
  std::int64_t row_end() const noexcept { return dist_.end(rank_); }
  std::int64_t local_rows() const noexcept { return dist_.rows(rank_); }
  std::int64_t cols() const noexcept { return dist_.global().cols; }
  std::int64_t local_size() const noexcept { return static_cast<std::int64_t>(block_.size()); }

  T* data() noexcept { return block_.data(); }
  const T* data() const noexcept { return block_.data(); }
  std::span<T> local() noexcept { return block_; }
  std::span<const T> local() const noexcept { return block_; }
  // Local row i, column j (row-major).
  T& operator()(std::int64_t i, std::int64_t j) noexcept {
    return block_[static_cast<std::size_t>(i * cols() + j)];
  }
  const T& operator()(std::int64_t i, std::int64_t j) const noexcept {
    return block_[static_cast<std::size_t>(i * cols() + j)];
  }

private:
  BlockDistribution dist_;
  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0;
  Memory memory_ = Memory::Host;
  std::vector<T> block_;
};

} // namespace tessera
