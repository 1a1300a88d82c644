#include "ops/host_matrix.hpp"

#include <algorithm>
#include <cstdlib>
#include <new>
#include <type_traits>

#include "core/log.hpp"
#include "core/progress.hpp"
#include "core/throw.hpp"
#include "io/provenance.hpp"
#include "mpi/agreement.hpp"
#include "mpi/communicator.hpp"
#include "mpi/reduce_plan.hpp"
#include "ops/random_fill.hpp"

namespace tessera::ops {

HostMatrix::HostMatrix(const BlockDistribution& dist, DType dtype, int rank)
    : dist_(dist), dtype_(dtype), local_rows_(dist.rows(rank)) {
  // Never a null pointer, even for a rank without rows: plans may insist on one.
  data_ = AlignedBuffer(local_bytes(), fmt::format("a {} {} block ({} rows)", dist.global().str(),
                                                   dtype_name(dtype), local_rows_));
}

std::size_t HostMatrix::local_bytes() const noexcept {
  return static_cast<std::size_t>(local_rows_) * static_cast<std::size_t>(dist_.global().cols) *
         dtype_size(dtype_);
}

double HostMatrix::global_bytes() const noexcept {
  return double(dist_.global().rows) * double(dist_.global().cols) * double(dtype_size(dtype_));
}

HostMatrix allocate_matrix(const BlockDistribution& dist, DType dtype, const std::string& what,
                           MPI_Comm comm) {
  HostMatrix m;
  mpi::collectively(comm, [&] {
    try {
      m = HostMatrix(dist, dtype, mpi::comm_rank(comm));
    } catch (const ResourceError& e) {
      TESSERA_THROW(ResourceError, "{}: {}", what, e.what());
    }
  });
  return m;
}

void require_nonempty(Shape shape, const std::string& what) {
  if (shape.rows <= 0 || shape.cols <= 0)
    TESSERA_THROW(InputError, "{}: zero-size matrix {}x{}; rows and columns must be positive", what,
                  shape.rows, shape.cols);
}

void require_nonempty(const io::DatasetInfo& info, const io::DatasetRef& ref) {
  if (info.shape.rows <= 0 || info.shape.cols <= 0)
    TESSERA_THROW(InputError,
                  "dataset {} is empty ({}x{}); expected a matrix with at least one row and one "
                  "column",
                  ref.str(), info.shape.rows, info.shape.cols);
}

namespace {

// A rank's rows split into the same number of collective transfers on every rank, of about
// kPieceBytes on the rank with the most rows, for progress lines during long reads and writes.
class RowPieces {
public:
  static constexpr double kPieceBytes = 64.0 * 1024 * 1024;
  static constexpr std::int64_t kMostPieces = 256;

  RowPieces(const BlockDistribution& d, DType t, bool whole = false)
      : d_(d), row_bytes_(double(d.global().cols) * double(dtype_size(t))) {
    for (int r = 0; r < d.nranks(); ++r)
      most_ = std::max(most_, d.rows(r));
    const double bytes = double(most_) * row_bytes_;
    count_ = whole ? 1
                   : std::clamp<std::int64_t>(static_cast<std::int64_t>(bytes / kPieceBytes) + 1, 1,
                                              std::max<std::int64_t>(most_, 1));
    count_ = std::min(count_, kMostPieces);
    step_ = (most_ + count_ - 1) / std::max<std::int64_t>(count_, 1);
  }
  std::int64_t count() const { return count_; }
  // Piece p of `rank`'s rows (empty where the rank has fewer rows than others).
  io::Hyperslab slab(std::int64_t p, int rank) const {
    const std::int64_t lo = std::min(p * step_, d_.rows(rank));
    const std::int64_t hi = std::min((p + 1) * step_, d_.rows(rank));
    return {d_.begin(rank) + lo, hi - lo, 0, d_.global().cols};
  }
  template <class Ptr>
  Ptr data(Ptr base, std::int64_t p, int rank) const {
    const std::int64_t lo = std::min(p * step_, d_.rows(rank));
    using Byte = std::conditional_t<std::is_const_v<std::remove_pointer_t<Ptr>>, const char, char>;
    return static_cast<Ptr>(static_cast<Byte*>(base) +
                            static_cast<std::size_t>(double(lo) * row_bytes_));
  }
  // Rank 0's bytes (progress is rank 0's).
  double total_bytes() const { return double(d_.rows(0)) * row_bytes_; }
  double done_bytes(std::int64_t p) const {
    return double(std::min((p + 1) * step_, d_.rows(0))) * row_bytes_;
  }

private:
  BlockDistribution d_;
  double row_bytes_;
  std::int64_t most_ = 0, count_ = 1, step_ = 0;
};

} // namespace

HostMatrix generate_matrix(Shape shape, DType dtype, std::uint64_t seed, MPI_Comm comm,
                           PhaseTimers& timers) {
  mpi::collectively(comm, [&] { require_nonempty(shape, "generate"); });
  const int rank = mpi::comm_rank(comm);
  const BlockDistribution dist(shape, mpi::comm_size(comm));
  HostMatrix m = allocate_matrix(dist, dtype, "the generated matrix", comm);
  ScopedPhase phase(timers, "generate", double(m.local_bytes()));
  // Chunks of rows so that rank 0 can show progress on large matrices.
  const std::int64_t rows = m.local_rows();
  const std::int64_t step = std::max<std::int64_t>(1, rows / 64);
  const std::size_t row_bytes = static_cast<std::size_t>(shape.cols) * dtype_size(dtype);
  Progress progress("generate", double(m.local_bytes()), Progress::Unit::Bytes);
  for (std::int64_t r = 0; r < rows; r += step) {
    const std::int64_t n = std::min(step, rows - r);
    random_fill_rows(dtype, dist.begin(rank) + r, n, shape.cols, seed,
                     static_cast<char*>(m.data()) + static_cast<std::size_t>(r) * row_bytes);
    progress.update(double(r + n) * double(row_bytes));
  }
  progress.finish();
  return m;
}

HostMatrix read_matrix(MatrixInput& in, MPI_Comm comm, PhaseTimers& timers) {
  const double t0 = wall_seconds();
  const int rank = mpi::comm_rank(comm);
  TESSERA_REQUIRE(in.file.has_value(), InternalError, "read_matrix: {} is not an open file",
                  in.name());
  io::H5File& f = *in.file;
  const io::DatasetRef& ref = *in.ref;
  const io::DatasetInfo info = in.info;
  // Every rank sees the same metadata, so this check fails on all ranks together.
  mpi::collectively(comm, [&] { require_nonempty(info, ref); });
  HostMatrix m = allocate_matrix(BlockDistribution(info.shape, mpi::comm_size(comm)), info.dtype,
                                 "reading " + ref.str(), comm);
  // In pieces, so that rank 0 can show progress on large matrices (one piece when small).
  const RowPieces pieces(m.dist(), info.dtype);
  Progress progress("read", pieces.total_bytes(), Progress::Unit::Bytes);
  for (std::int64_t p = 0; p < pieces.count(); ++p) {
    io::read_block(f, ref.path, pieces.slab(p, rank), info.dtype, pieces.data(m.data(), p, rank));
    progress.update(pieces.done_bytes(p));
  }
  progress.finish();
  in.close();
  timers.add("read", wall_seconds() - t0, double(m.local_bytes()));
  return m;
}

HostMatrix transpose_matrix(const HostMatrix& a, Backend backend, Exchange exchange, int repeat,
                            MPI_Comm comm, PhaseTimers& timers, TransposeRun* run) {
  TransposeOptions options;
  options.algorithm = exchange;
  options.timers = &timers;
  TransposePlan plan(a.dist(), a.dtype(), comm, backend, options);
  HostMatrix out = allocate_matrix(plan.output_distribution(), a.dtype(), "the transpose", comm);
  // The first execution of an Auto plan times every exchange algorithm first (a collective
  // trial, no progress of its own inside): say so, and what it chose.
  const bool trial = exchange == Exchange::Auto && mpi::comm_size(comm) > 1;
  if (trial)
    log::info("transpose: timing the exchange algorithms on the first execution (trial)");
  Progress progress("transpose", repeat);
  double last = 0.0;
  for (int k = 0; k < repeat; ++k) {
    const double t0 = wall_seconds();
    plan.execute(a.data(), out.data());
    last = wall_seconds() - t0;
    if (trial && k == 0)
      log::info("transpose: the trial chose the {} exchange ({:.3f} s with the trial)",
                exchange_name(plan.algorithm()), last);
    timers.add("transpose", last, plan.bytes_moved());
    progress.update(k + 1);
  }
  progress.finish();
  if (run)
    *run = {plan.backend(), plan.algorithm(), last};
  return out;
}

ReduceResult reduce_matrix(const HostMatrix& a, const std::vector<Op>& ops, Axis axis,
                           Backend backend, MPI_Comm comm, PhaseTimers& timers, Backend* used,
                           const MissingValues& missing) {
  mpi::collectively(comm, [&] {
    if (!dtype_is_real(a.dtype()))
      TESSERA_THROW(InputError, "reductions take f32 or f64 data; this matrix is {}",
                    dtype_name(a.dtype()));
  });
  ReduceOptions options;
  options.timers = &timers;
  options.missing = missing;
  ReducePlan plan(a.dist(), a.dtype(), comm, backend, ops, axis, options);
  const double t0 = wall_seconds();
  ReduceResult r = plan.execute(a.data());
  timers.add("reduce", wall_seconds() - t0, plan.bytes_read());
  if (used)
    *used = plan.backend();
  return r;
}

void write_matrix(io::H5File& f, const std::string& path, const HostMatrix& a,
                  const io::WriteOptions& opts, PhaseTimers& timers) {
  const double t0 = wall_seconds();
  const int rank = mpi::comm_rank(f.comm());
  io::create_dataset(f, path, a.shape(), a.dtype(), opts);
  // In pieces for progress; a compressed output in one: pieces that share an HDF5 chunk would
  // compress it twice.
  const RowPieces pieces(a.dist(), a.dtype(), opts.deflate > 0);
  Progress progress("write", pieces.total_bytes(), Progress::Unit::Bytes);
  for (std::int64_t p = 0; p < pieces.count(); ++p) {
    io::write_block(f, path, pieces.slab(p, rank), a.dtype(), pieces.data(a.data(), p, rank));
    progress.update(pieces.done_bytes(p));
  }
  progress.finish();
  timers.add("write", wall_seconds() - t0, double(a.local_bytes()));
}

void write_reductions(io::H5File& f, const std::string& group, const ReduceResult& r, Shape shape,
                      const std::string& of, MPI_Comm comm, PhaseTimers& timers) {
  const double t0 = wall_seconds();
  const Shape rshape = r.axis == Axis::All    ? Shape{1, 1}
                       : r.axis == Axis::Rows ? Shape{shape.rows, 1}
                                              : Shape{1, shape.cols};
  const int rank = mpi::comm_rank(comm);
  const BlockDistribution dist(rshape, mpi::comm_size(comm));
  double bytes = 0.0;
  for (std::size_t k = 0; k < r.ops.size(); ++k) {
    const std::string path = group + "/" + std::string(op_name(r.ops[k]));
    // Every rank holds all values; each writes its own rows of the result.
    const double* mine = r.values[k].data() + dist.begin(rank) * rshape.cols;
    io::write_rows(f, path, dist, rank, DType::f64, mine);
    io::write_attribute(f, path, "op", std::string(op_name(r.ops[k])));
    io::write_attribute(f, path, "axis", std::string(axis_name(r.axis)));
    io::write_attribute(f, path, "of", of);
    bytes += double(dist.local_size(rank)) * 8.0;
  }
  timers.add("write", wall_seconds() - t0, bytes);
}

} // namespace tessera::ops
