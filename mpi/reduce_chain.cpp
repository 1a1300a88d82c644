#include "mpi/reduce_chain.hpp"

#include <algorithm>

#include "core/check.hpp"
#include "core/throw.hpp"
#include "cpu/reduce.hpp"

namespace tessera::mpi {

namespace {

constexpr int kChainTag = 7302;
// Doubles per MPI call: keeps int counts valid for any number of columns.
constexpr std::int64_t kChunk = std::int64_t{1} << 27;

void send_doubles(const double* p, std::int64_t n, int to, MPI_Comm comm) {
  for (std::int64_t off = 0; off < n; off += kChunk)
    CHECK_MPI(MPI_Send(p + off, static_cast<int>(std::min(kChunk, n - off)), MPI_DOUBLE, to,
                       kChainTag, comm));
}

void recv_doubles(double* p, std::int64_t n, int from, MPI_Comm comm) {
  for (std::int64_t off = 0; off < n; off += kChunk)
    CHECK_MPI(MPI_Recv(p + off, static_cast<int>(std::min(kChunk, n - off)), MPI_DOUBLE, from,
                       kChainTag, comm, MPI_STATUS_IGNORE));
}

void bcast_doubles(double* p, std::int64_t n, int root, MPI_Comm comm) {
  for (std::int64_t off = 0; off < n; off += kChunk)
    CHECK_MPI(
        MPI_Bcast(p + off, static_cast<int>(std::min(kChunk, n - off)), MPI_DOUBLE, root, comm));
}

} // namespace

RowBlockCut::RowBlockCut(std::int64_t begin, std::int64_t end) : rows(end - begin) {
  if (rows <= 0) {
    rows = 0;
    return;
  }
  const std::int64_t B = kReduceBlockRows;
  const std::int64_t first_boundary = (begin + B - 1) / B * B;
  head_end = std::min(first_boundary, end) - begin;
  head_closes = head_end > 0 && end >= first_boundary;
  body_end = end > first_boundary ? end / B * B - begin : head_end;
}

CanonicalChain::CanonicalChain(MPI_Comm comm, const BlockDistribution& dist, Axis axis,
                               std::size_t element_size)
    : comm_(comm), axis_(axis), cols_(dist.global().cols), global_rows_(dist.global().rows),
      element_size_(element_size) {
  TESSERA_REQUIRE(axis != Axis::Rows, InternalError, "CanonicalChain: rows need no chain");
  CHECK_MPI(MPI_Comm_rank(comm, &rank_));
  CHECK_MPI(MPI_Comm_size(comm, &size_));
  cut_ = RowBlockCut(dist.begin(rank_), dist.end(rank_));
  first_row_ = dist.begin(rank_);
}

std::vector<std::vector<double>>
CanonicalChain::run(ReduceEngine& engine, const std::vector<Op>& ops, const void* block,
                    const std::vector<std::vector<double>>* row_values) const {
  const RowBlockCut& c = cut_;
  const std::int64_t w = axis_ == Axis::All ? 1 : cols_;
  const auto K = static_cast<std::int64_t>(ops.size());
  const auto* base = static_cast<const char*>(block);
  auto row_ptr = [&](std::int64_t i) {
    return base + static_cast<std::size_t>(i * cols_) * element_size_;
  };

  // 1. Without waiting for anyone: the partials of the blocks that begin on this rank (body
  //    blocks, tail) and, for All, the row values the head will add.
  const std::int64_t nb = c.body_blocks();
  TESSERA_REQUIRE(axis_ == Axis::Cols || std::all_of(ops.begin(), ops.end(), is_sum_family),
                  InternalError, "reduction chain: only the Sum family over all");
  // For All: the caller's row values, or this rank's computed here (own).
  std::vector<std::vector<double>> own;
  const std::vector<std::vector<double>>& rowv = row_values ? *row_values : own;
  if (axis_ == Axis::All) {
    if (row_values) {
      TESSERA_REQUIRE(row_values->size() == ops.size(), InternalError,
                      "reduction chain: {} row value lists for {} ops", row_values->size(),
                      ops.size());
    } else {
      own.resize(static_cast<std::size_t>(K));
      std::vector<double*> out;
      for (auto& r : own) {
        r.resize(static_cast<std::size_t>(c.rows));
        out.push_back(r.data());
      }
      if (c.rows > 0)
        engine.reduce_rows_multi(ops, block, c.rows, cols_, out.data());
    }
  }
  std::vector<std::vector<double>> body(static_cast<std::size_t>(K)),
      tail(static_cast<std::size_t>(K));
  std::vector<double*> tail_out;
  for (std::int64_t k = 0; k < K; ++k) {
    if (axis_ == Axis::All) // along Cols the engine keeps the body's partials
      body[k].assign(static_cast<std::size_t>(nb * w), 0.0);
    tail[k].assign(static_cast<std::size_t>(w), 0.0);
    tail_out.push_back(tail[k].data());
  }
  if (axis_ == Axis::Cols) { // every op from one read of the rows; the engine keeps the body's
    if (nb > 0)
      engine.keep_col_groups_multi(ops, row_ptr(c.head_end), c.body_end - c.head_end, cols_);
    if (c.has_tail())
      engine.reduce_col_groups_multi(ops, row_ptr(c.body_end), c.rows - c.body_end, cols_,
                                     tail_out.data());
  }
  for (std::int64_t k = 0; k < K && axis_ == Axis::All; ++k) { // block partials of row values
    const auto& r = rowv[k];
    TESSERA_REQUIRE(static_cast<std::int64_t>(r.size()) == c.rows, InternalError,
                    "reduction chain: {} row values for {} rows", r.size(), c.rows);
    cpu::fold_row_blocks(ops[k], r.data() + c.head_end, nb * kReduceBlockRows, body[k].data());
    double t = 0.0;
    for (std::int64_t i = c.body_end; i < c.rows; ++i)
      t += r[i];
    tail[k][0] = t;
  }

  // 2. The chain. State: per op, the closed super-blocks' total (w), the open super-block's
  //    fold (w) and the open block's partial (w); then the open flag.
  const std::int64_t n = 3 * K * w + 1;
  std::vector<double> state(static_cast<std::size_t>(n), 0.0);
  if (rank_ > 0)
    recv_doubles(state.data(), n, rank_ - 1, comm_);
  else // the folds start from each op's identity (0.0 for the Sum family)
    for (std::int64_t k = 0; k < K; ++k)
      std::fill_n(state.data() + 3 * k * w, 3 * w, identity(ops[k]));
  double& open = state.back();
  // Global block numbers: the head's block, the first body block.
  const std::int64_t head_block = first_row_ / kReduceBlockRows;
  const std::int64_t body_block = (first_row_ + c.head_end) / kReduceBlockRows;
  if (c.rows > 0) {
    TESSERA_REQUIRE((c.head_end > 0) == (open != 0.0), InternalError,
                    "reduction chain: rank {} expected {} open block", rank_,
                    c.head_end > 0 ? "an" : "no");
    for (std::int64_t k = 0; k < K; ++k) {
      double* total = state.data() + 3 * k * w;
      double* super = total + w;
      double* partial = super + w;
      if (c.head_end > 0) {
        if (axis_ == Axis::All) {
          for (std::int64_t i = 0; i < c.head_end; ++i)
            partial[0] += rowv[k][i];
        } else {
          engine.fold_rows(ops[k], block, c.head_end, cols_, partial);
        }
        if (c.head_closes)
          cpu::fold_partials(ops[k], total, super, head_block, partial, 1, w);
      }
      if (axis_ == Axis::Cols) {
        if (nb > 0)
          engine.fold_kept_col_groups(static_cast<std::size_t>(k), total, super, body_block);
      } else {
        cpu::fold_partials(ops[k], total, super, body_block, body[k].data(), nb, w);
      }
      if (c.has_tail())
        std::copy(tail[k].begin(), tail[k].end(), partial);
    }
    open = c.has_tail() || (c.head_end == c.rows && !c.head_closes) ? 1.0 : 0.0;
  }
  if (rank_ + 1 < size_)
    send_doubles(state.data(), n, rank_ + 1, comm_);

  // 3. The last rank closes the open block (the matrix's last) and super-block, and tells
  //    everyone.
  std::vector<double> totals(static_cast<std::size_t>(K * w));
  const std::int64_t last_block = (global_rows_ - 1) / kReduceBlockRows;
  if (rank_ == size_ - 1)
    for (std::int64_t k = 0; k < K; ++k) {
      double* total = state.data() + 3 * k * w;
      double* super = total + w;
      if (open != 0.0)
        cpu::fold_partials(ops[k], total, super, last_block, super + w, 1, w);
      cpu::close_partials(ops[k], total, super, w);
      std::copy(total, total + w, totals.begin() + k * w);
    }
  if (size_ > 1)
    bcast_doubles(totals.data(), K * w, size_ - 1, comm_);
  std::vector<std::vector<double>> out(static_cast<std::size_t>(K));
  for (std::int64_t k = 0; k < K; ++k)
    out[k].assign(totals.begin() + k * w, totals.begin() + (k + 1) * w);
  return out;
}

} // namespace tessera::mpi
