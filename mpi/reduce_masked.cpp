// The masking engine (mpi/reduce_masked.hpp).
#include "mpi/reduce_masked.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <omp.h>

#include "core/reduction.hpp"
#include "core/throw.hpp"

namespace tessera {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

} // namespace

MissingTest::MissingTest(const MissingValues& m)
    : skip_nan(m.skip_nan), lo(m.valid_min), hi(m.valid_max) {
  for (double v : m.values)
    if (std::isnan(v))
      nan_listed = true;
    else
      values.push_back(v);
}

MaskedReduceEngine::MaskedReduceEngine(std::unique_ptr<ReduceEngine> inner, DType dtype,
                                       MissingValues missing, bool cache_pieces)
    : inner_(std::move(inner)), dtype_(dtype), missing_(std::move(missing)),
      cache_pieces_(cache_pieces) {
  TESSERA_REQUIRE(dtype_is_real(dtype_), InternalError, "masked reductions of {} data",
                  dtype_name(dtype_));
}

MaskedReduceEngine::Kind MaskedReduceEngine::kind_of(Op op) noexcept {
  switch (op) {
  case Op::Min:
    return Kind::PlusInf;
  case Op::Max:
    return Kind::MinusInf;
  case Op::Count:
    return Kind::Count;
  default:
    return Kind::Zero;
  }
}

const void* MaskedReduceEngine::view(Kind kind, const void* a, std::int64_t n) {
  const MissingTest missing(missing_);
  const bool packed = missing_.packed();
  const double scale = missing_.scale_factor, offset = missing_.add_offset;
  return dispatch_real_dtype(dtype_, [&](auto tag) -> const void* {
    using T = decltype(tag);
    const T* x = static_cast<const T*>(a);
    if (kind != Kind::Count && !has_missing(a, n))
      return a;
    const double sub = kind == Kind::PlusInf ? kInf : kind == Kind::MinusInf ? -kInf : 0.0;
    scratch_.resize(static_cast<std::size_t>(n) * sizeof(T));
    T* y = reinterpret_cast<T*>(scratch_.data());
#pragma omp parallel for schedule(static) if (n > 65536)
    for (std::int64_t i = 0; i < n; ++i) {
      const double v = static_cast<double>(x[i]);
      if (missing(v))
        y[i] = static_cast<T>(sub);
      else if (kind == Kind::Count)
        y[i] = T{1};
      else
        y[i] = packed ? static_cast<T>(v * scale + offset) : x[i]; // no FMA: -ffp-contract=off
    }
    return y;
  });
}

bool MaskedReduceEngine::has_missing(const void* a, std::int64_t n) const {
  if (missing_.packed())
    return true;
  const MissingTest missing(missing_);
  return dispatch_real_dtype(dtype_, [&](auto tag) {
    using T = decltype(tag);
    const T* x = static_cast<const T*>(a);
    if (n <= 65536)
      return missing.any(x, n);
    bool any = false;
#pragma omp parallel reduction(|| : any)
    {
      const auto t = static_cast<std::int64_t>(omp_get_thread_num());
      const auto nt = static_cast<std::int64_t>(omp_get_num_threads());
      any = missing.any(x + n * t / nt, n * (t + 1) / nt - n * t / nt);
    }
    return any;
  });
}

template <class Inner, class Fill>
bool MaskedReduceEngine::all_valid(const std::vector<Op>& ops, const void* a, std::int64_t n,
                                   double* const* out, Inner&& inner, Fill&& fill_count) {
  if (has_missing(a, n))
    return false;
  std::vector<Op> sub;
  std::vector<double*> sub_out;
  for (std::size_t k = 0; k < ops.size(); ++k)
    if (ops[k] == Op::Count) {
      fill_count(out[k]);
    } else {
      sub.push_back(ops[k]);
      sub_out.push_back(out[k]);
    }
  if (!sub.empty())
    inner(sub, sub_out.data());
  return true;
}

template <class Fn>
void MaskedReduceEngine::by_kind(const std::vector<Op>& ops, double* const* out, Fn&& fn) {
  std::vector<bool> done(ops.size(), false);
  for (std::size_t k = 0; k < ops.size(); ++k) {
    if (done[k])
      continue;
    std::vector<Op> sub;
    std::vector<double*> sub_out;
    for (std::size_t j = k; j < ops.size(); ++j)
      if (!done[j] && kind_of(ops[j]) == kind_of(ops[k])) {
        sub.push_back(ops[j]);
        sub_out.push_back(out[j]);
        done[j] = true;
      }
    fn(kind_of(ops[k]), sub, sub_out.data());
  }
}

void MaskedReduceEngine::reduce_rows(Op op, const void* a, std::int64_t rows, std::int64_t cols,
                                     double* out) {
  inner_->reduce_rows(op, view(kind_of(op), a, rows * cols), rows, cols, out);
}

namespace {

// Rows of `cols` elements of `es` bytes in one stretch of cache_pieces: whole multiples of
// `unit` rows, about kStretchBytes together (at least one unit).
constexpr std::int64_t kStretchBytes = std::int64_t{1} << 21;
std::int64_t stretch_rows(std::int64_t cols, std::size_t es, std::int64_t unit) {
  const std::int64_t row_bytes = std::max<std::int64_t>(cols, 1) * static_cast<std::int64_t>(es);
  return std::max<std::int64_t>(1, kStretchBytes / (row_bytes * unit)) * unit;
}

// Calls fn(first row, rows, the outputs from out_at(first row) on) per stretch of rows.
template <class At, class Fn>
void by_stretch(std::int64_t rows, std::int64_t stretch, std::size_t nout, double* const* out,
                At&& out_at, Fn&& fn) {
  std::vector<double*> shifted(nout);
  for (std::int64_t r = 0; r < rows; r += stretch) {
    for (std::size_t k = 0; k < nout; ++k)
      shifted[k] = out[k] + out_at(r);
    fn(r, std::min(stretch, rows - r), shifted.data());
  }
}

} // namespace

void MaskedReduceEngine::reduce_rows_multi(const std::vector<Op>& ops, const void* a,
                                           std::int64_t rows, std::int64_t cols,
                                           double* const* out) {
  if (!cache_pieces_) {
    rows_multi(ops, a, rows, cols, out);
    return;
  }
  const std::size_t es = dtype_size(dtype_);
  by_stretch(
      rows, stretch_rows(cols, es, 1), ops.size(), out, [](std::int64_t r) { return r; },
      [&](std::int64_t r, std::int64_t n, double* const* o) {
        rows_multi(ops, static_cast<const char*>(a) + r * cols * es, n, cols, o);
      });
}

void MaskedReduceEngine::rows_multi(const std::vector<Op>& ops, const void* a, std::int64_t rows,
                                    std::int64_t cols, double* const* out) {
  // A row of cols valid elements counts cols (a sum of ones, exact).
  if (all_valid(
          ops, a, rows * cols, out,
          [&](const std::vector<Op>& sub, double* const* o) {
            inner_->reduce_rows_multi(sub, a, rows, cols, o);
          },
          [&](double* o) { std::fill_n(o, rows, static_cast<double>(cols)); }))
    return;
  by_kind(ops, out, [&](Kind kind, const std::vector<Op>& sub, double* const* o) {
    inner_->reduce_rows_multi(sub, view(kind, a, rows * cols), rows, cols, o);
  });
}

void MaskedReduceEngine::reduce_col_groups(Op op, const void* a, std::int64_t rows,
                                           std::int64_t cols, double* out) {
  inner_->reduce_col_groups(op, view(kind_of(op), a, rows * cols), rows, cols, out);
}

void MaskedReduceEngine::reduce_col_groups_multi(const std::vector<Op>& ops, const void* a,
                                                 std::int64_t rows, std::int64_t cols,
                                                 double* const* out) {
  if (!cache_pieces_) {
    col_groups_multi(ops, a, rows, cols, out);
    return;
  }
  const std::size_t es = dtype_size(dtype_);
  by_stretch(
      rows, stretch_rows(cols, es, kReduceBlockRows), ops.size(), out,
      [cols](std::int64_t r) { return r / kReduceBlockRows * cols; },
      [&](std::int64_t r, std::int64_t n, double* const* o) {
        col_groups_multi(ops, static_cast<const char*>(a) + r * cols * es, n, cols, o);
      });
}

void MaskedReduceEngine::col_groups_multi(const std::vector<Op>& ops, const void* a,
                                          std::int64_t rows, std::int64_t cols,
                                          double* const* out) {
  // A group's column partial counts its rows (kReduceBlockRows, the last group fewer).
  if (all_valid(
          ops, a, rows * cols, out,
          [&](const std::vector<Op>& sub, double* const* o) {
            inner_->reduce_col_groups_multi(sub, a, rows, cols, o);
          },
          [&](double* o) {
            const std::int64_t groups = (rows + kReduceBlockRows - 1) / kReduceBlockRows;
            for (std::int64_t g = 0; g < groups; ++g)
              std::fill_n(
                  o + g * cols, cols,
                  static_cast<double>(std::min(kReduceBlockRows, rows - g * kReduceBlockRows)));
          }))
    return;
  by_kind(ops, out, [&](Kind kind, const std::vector<Op>& sub, double* const* o) {
    inner_->reduce_col_groups_multi(sub, view(kind, a, rows * cols), rows, cols, o);
  });
}

void MaskedReduceEngine::fold_rows(Op op, const void* a, std::int64_t rows, std::int64_t cols,
                                   double* acc) {
  inner_->fold_rows(op, view(kind_of(op), a, rows * cols), rows, cols, acc);
}

bool needs_masking(const std::vector<Op>& ops, const MissingValues& missing) {
  return missing.any() || std::find(ops.begin(), ops.end(), Op::Count) != ops.end();
}

std::vector<Op> with_counts(const std::vector<Op>& ops, const MissingValues& missing) {
  std::vector<Op> all = ops;
  const bool counted = std::any_of(ops.begin(), ops.end(), [](Op op) {
    return op == Op::Mean || op == Op::Min || op == Op::Max;
  });
  if (missing.any() && counted && std::find(ops.begin(), ops.end(), Op::Count) == ops.end())
    all.push_back(Op::Count);
  return all;
}

void finalize_counted(Op op, std::vector<double>& v, const std::vector<double>* counts, double n) {
  if (!counts || !(op == Op::Mean || op == Op::Min || op == Op::Max)) {
    finalize_all(op, v, n);
    return;
  }
  TESSERA_REQUIRE(counts->size() == v.size(), InternalError, "{} values but {} counts", v.size(),
                  counts->size());
  const auto m = static_cast<std::int64_t>(v.size());
#pragma omp parallel for schedule(static) if (m > 65536)
  for (std::int64_t i = 0; i < m; ++i) {
    const double c = (*counts)[static_cast<std::size_t>(i)];
    if (op == Op::Mean)
      v[i] = v[i] / c; // 0 / 0: NaN, the mean of nothing
    else if (c == 0.0)
      v[i] = std::numeric_limits<double>::quiet_NaN();
  }
}

} // namespace tessera
