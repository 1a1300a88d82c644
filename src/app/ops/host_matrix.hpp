// This rank's row block of a distributed matrix in host memory, and the steps the commands and
// the pipeline job chain together: generate or read, transpose, reduce, write. Each step is
// collective, agrees on failure before it can leave ranks waiting (mpi::collectively), and
// adds its phase to a PhaseTimers for the timing table.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/aligned_buffer.hpp"
#include "core/backend.hpp"
#include "core/block_distribution.hpp"
#include "core/dtype.hpp"
#include "core/reduction.hpp"
#include "core/timers.hpp"
#include "io/dataset_ref.hpp"
#include "io/h5_file.hpp"
#include "io/h5_matrix.hpp"
#include "io/same_file.hpp"
#include "mpi/transpose_plan.hpp"
#include "ops/matrix_input.hpp"

namespace tessera::ops {

class HostMatrix {
public:
  HostMatrix() = default;
  // Allocates (64-byte aligned); throws ResourceError naming the size on this rank only.
  HostMatrix(const BlockDistribution& dist, DType dtype, int rank);

  const BlockDistribution& dist() const noexcept { return dist_; }
  const Shape& shape() const noexcept { return dist_.global(); }
  DType dtype() const noexcept { return dtype_; }
  void* data() noexcept { return data_.data(); }
  const void* data() const noexcept { return data_.data(); }
  std::int64_t local_rows() const noexcept { return local_rows_; }
  std::size_t local_bytes() const noexcept;
  double global_bytes() const noexcept;

private:
  BlockDistribution dist_;
  DType dtype_ = DType::f64;
  std::int64_t local_rows_ = 0;
  AlignedBuffer data_;
};

// Collective allocation: when any rank cannot allocate, every rank throws ResourceError.
// `what` names the matrix in the message ("the transpose").
HostMatrix allocate_matrix(const BlockDistribution& dist, DType dtype, const std::string& what,
                           MPI_Comm comm);

// Throws InputError unless rows and cols are positive (`what` names them: "--rows/--cols").
void require_nonempty(Shape shape, const std::string& what);

// Throws InputError on every rank naming the dataset when it is empty (0 rows or columns).
void require_nonempty(const io::DatasetInfo& info, const io::DatasetRef& ref);

using io::same_file; // io/same_file.hpp

// Generates the matrix of ops/random_fill.hpp (phase "generate", with progress).
HostMatrix generate_matrix(Shape shape, DType dtype, std::uint64_t seed, MPI_Comm comm,
                           PhaseTimers& timers);

// Reads the opened input (ops/matrix_input.hpp; phase "read") and closes it. Throws on every
// rank naming the dataset when it is empty.
HostMatrix read_matrix(MatrixInput& in, MPI_Comm comm, PhaseTimers& timers);

struct TransposeRun {
  Backend backend = Backend::Cpu;     // resolved
  Exchange exchange = Exchange::Auto; // resolved
  double seconds = 0.0;               // of the last execution
};

// Transposes with a TransposePlan, `repeat` executions (phase "transpose", plan phases too).
HostMatrix transpose_matrix(const HostMatrix& a, Backend backend, Exchange exchange, int repeat,
                            MPI_Comm comm, PhaseTimers& timers, TransposeRun* run = nullptr);

// Reduces with a ReducePlan (phase "reduce"). Complex data is an InputError.
// `missing`: what to skip and decode (ReduceOptions::missing).
ReduceResult reduce_matrix(const HostMatrix& a, const std::vector<Op>& ops, Axis axis,
                           Backend backend, MPI_Comm comm, PhaseTimers& timers,
                           Backend* used = nullptr, const MissingValues& missing = {});

// Writes the matrix as a 2-D dataset (phase "write").
void write_matrix(io::H5File& f, const std::string& path, const HostMatrix& a,
                  const io::WriteOptions& opts, PhaseTimers& timers);

// Writes each op's result as a 2-D f64 dataset GROUP/<op>: 1x1 (All), rows x 1 (Rows) or
// 1 x cols (Cols), with attributes op, axis and of (the dataset it reduces).
void write_reductions(io::H5File& f, const std::string& group, const ReduceResult& r, Shape shape,
                      const std::string& of, MPI_Comm comm, PhaseTimers& timers);

} // namespace tessera::ops
