#include "mpi/norm2_rescue.hpp"

#include <algorithm>
#include <utility>

#include "core/throw.hpp"
#include "cpu/reduce.hpp"
#include "cuda/buffer.hpp"

namespace tessera {

namespace {

void require_norm2(Op op) {
  TESSERA_REQUIRE(op == Op::Norm2, InternalError, "the Norm2 rescue engine was asked for {}",
                  op_name(op));
}

} // namespace

ScaledNorm2Engine::ScaledNorm2Engine(Memory memory, Norm2Exponents e, std::size_t piece_bytes)
    : memory_(memory), e_(std::move(e)), piece_bytes_(piece_bytes) {}

std::int64_t ScaledNorm2Engine::piece_rows(std::int64_t cols) const {
  const auto row_bytes = static_cast<std::size_t>(std::max<std::int64_t>(cols, 1)) * sizeof(double);
  return std::max<std::int64_t>(1, static_cast<std::int64_t>(piece_bytes_ / row_bytes));
}

const double* ScaledNorm2Engine::fetch(const void* a, std::int64_t r0, std::int64_t n,
                                       std::int64_t cols) {
  const double* p = static_cast<const double*>(a) + r0 * cols;
  if (memory_ == Memory::Host)
    return p;
  host_.resize(static_cast<std::size_t>(n * cols));
  cuda::copy(host_.data(), p, host_.size() * sizeof(double));
  return host_.data();
}

const int* ScaledNorm2Engine::col_exponents(std::int64_t cols) {
  if (!e_.cols.empty()) {
    TESSERA_REQUIRE(static_cast<std::int64_t>(e_.cols.size()) == cols, InternalError,
                    "Norm2 rescue: {} column exponents for {} columns", e_.cols.size(), cols);
    return e_.cols.data();
  }
  scratch_.assign(static_cast<std::size_t>(cols), e_.all);
  return scratch_.data();
}

void ScaledNorm2Engine::reduce_rows(Op op, const void* a, std::int64_t rows, std::int64_t cols,
                                    double* out) {
  require_norm2(op);
  TESSERA_REQUIRE(
      e_.rows.empty() ||
          (first_row_ >= 0 && first_row_ + rows <= static_cast<std::int64_t>(e_.rows.size())),
      InternalError, "Norm2 rescue: rows [{}, {}) have no exponents", first_row_,
      first_row_ + rows);
  const std::int64_t step = piece_rows(cols);
  for (std::int64_t r0 = 0; r0 < rows; r0 += step) {
    const std::int64_t n = std::min(step, rows - r0);
    if (e_.rows.empty())
      scratch_.assign(static_cast<std::size_t>(n), e_.all);
    else
      scratch_.assign(e_.rows.begin() + first_row_ + r0, e_.rows.begin() + first_row_ + r0 + n);
    cpu::reduce_rows_scaled(fetch(a, r0, n, cols), n, cols, scratch_.data(), out + r0);
  }
}

void ScaledNorm2Engine::fold_rows(Op op, const void* a, std::int64_t rows, std::int64_t cols,
                                  double* acc) {
  require_norm2(op);
  const int* e = col_exponents(cols);
  const std::int64_t step = piece_rows(cols);
  for (std::int64_t r0 = 0; r0 < rows; r0 += step) {
    const std::int64_t n = std::min(step, rows - r0);
    cpu::fold_rows_scaled(fetch(a, r0, n, cols), n, cols, e, acc);
  }
}

void ScaledNorm2Engine::reduce_col_groups(Op op, const void* a, std::int64_t rows,
                                          std::int64_t cols, double* out) {
  require_norm2(op);
  // Each group's partial is a column fold of its rows from 0.0, Norm2's identity.
  for (std::int64_t g = 0; g * kReduceBlockRows < rows; ++g) {
    double* acc = out + g * cols;
    std::fill(acc, acc + cols, 0.0);
    const std::int64_t r0 = g * kReduceBlockRows;
    fold_rows(op, static_cast<const double*>(a) + r0 * cols, std::min(kReduceBlockRows, rows - r0),
              cols, acc);
  }
}

} // namespace tessera
