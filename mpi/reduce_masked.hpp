// Reductions that skip missing values (tessera/reduction.hpp, MissingValues) without touching
// the kernels: MaskedReduceEngine hands its inner engine each piece with every missing element
// replaced by the identity of the op's combine (0 for the Sum family and NormInf, +inf for Min,
// -inf for Max) and packed values decoded, and computes Count as the Sum of a piece of ones
// (valid) and zeros (missing). Adding +0.0 changes no partial sum (they start at +0.0 and so
// are never -0.0), so a result is the canonical order over the valid elements alone: the same
// bits for any rank count, thread count and backend, as without missing values.
//
// Pieces are host memory (the inner engine may be the CUDA one, fed from host buffers). A piece
// with nothing to skip or decode goes to the inner engine as it is; otherwise it is copied into
// a scratch buffer of the piece's size.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/dtype.hpp"
#include "core/reduction.hpp"
#include "mpi/reduce_engine.hpp"

namespace tessera {

// Whether a stored element is missing, compared in double: a stored f32 or integer converts to
// it exactly, as does the attribute that names it.
struct MissingTest {
  bool skip_nan;
  bool nan_listed = false;
  std::vector<double> values;
  double lo, hi;
  explicit MissingTest(const MissingValues& m);
  bool operator()(double x) const noexcept {
    if (x != x)
      return skip_nan || nan_listed;
    return x < lo || x > hi || std::find(values.begin(), values.end(), x) != values.end();
  }
  // Whether any of x[0, n) is missing. Without listed values the test is branch-free, so the
  // compiler vectorises it: it reads as fast as memory delivers.
  template <class T>
  bool any(const T* x, std::int64_t n) const noexcept {
    if (!values.empty())
      return std::any_of(x, x + n, [&](T v) { return (*this)(static_cast<double>(v)); });
    const bool nan_missing = skip_nan || nan_listed;
    constexpr std::int64_t kStretch = 4096; // elements between looks for an early way out
    for (std::int64_t i = 0; i < n; i += kStretch) {
      const std::int64_t end = std::min(n, i + kStretch);
      unsigned found = 0;
      if (nan_missing)
        for (std::int64_t k = i; k < end; ++k) {
          const double v = static_cast<double>(x[k]);
          found |= static_cast<unsigned>(!(v >= lo && v <= hi)); // NaN fails both
        }
      else
        for (std::int64_t k = i; k < end; ++k) {
          const double v = static_cast<double>(x[k]);
          found |= static_cast<unsigned>(v < lo) | static_cast<unsigned>(v > hi);
        }
      if (found != 0)
        return true;
    }
    return false;
  }
};

class MaskedReduceEngine final : public ReduceEngine {
public:
  // `dtype`: of the pieces (f32 or f64); `inner` computes on the masked pieces. `cache_pieces`
  // (for inner engines on the CPU): reduce_rows_multi and reduce_col_groups_multi check and
  // reduce a piece a few rows at a time, each stretch while it is still in the cache, instead
  // of reading the whole piece twice (row values and column groups do not depend on it).
  MaskedReduceEngine(std::unique_ptr<ReduceEngine> inner, DType dtype, MissingValues missing,
                     bool cache_pieces = false);
  ReduceEngine& inner() noexcept { return *inner_; }

  void reduce_rows(Op op, const void* a, std::int64_t rows, std::int64_t cols,
                   double* out) override;
  void reduce_rows_multi(const std::vector<Op>& ops, const void* a, std::int64_t rows,
                         std::int64_t cols, double* const* out) override;
  void reduce_col_groups(Op op, const void* a, std::int64_t rows, std::int64_t cols,
                         double* out) override;
  void reduce_col_groups_multi(const std::vector<Op>& ops, const void* a, std::int64_t rows,
                               std::int64_t cols, double* const* out) override;
  void fold_rows(Op op, const void* a, std::int64_t rows, std::int64_t cols, double* acc) override;
  // keep_col_groups_multi / fold_kept_col_groups: the base class's, in host memory, over the
  // masked pieces (the ops of one call may need different substitutes).

private:
  // What a missing element becomes for an op, and whether valid ones become 1.
  enum class Kind { Zero, PlusInf, MinusInf, Count };
  static Kind kind_of(Op op) noexcept;
  // The piece as ops of `kind` see it: `a` itself, or scratch_.
  const void* view(Kind kind, const void* a, std::int64_t n);
  // Whether some element of the piece is missing (packed data: always, as it must be decoded).
  bool has_missing(const void* a, std::int64_t n) const;
  // Calls fn(kind, sub_ops, sub_out) once per kind present in ops, in the order of first use:
  // sub_out holds the entries of `out` that belong to sub_ops.
  template <class Fn>
  void by_kind(const std::vector<Op>& ops, double* const* out, Fn&& fn);
  // A piece without missing elements: every op but Count in one inner call on `a` itself (one
  // read of the piece, as without masking), Count's values by `fill_count`; false when some
  // element is missing and the ops must go by kind.
  template <class Inner, class Fill>
  bool all_valid(const std::vector<Op>& ops, const void* a, std::int64_t n, double* const* out,
                 Inner&& inner, Fill&& fill_count);

  // reduce_rows_multi / reduce_col_groups_multi on one stretch of rows.
  void rows_multi(const std::vector<Op>& ops, const void* a, std::int64_t rows, std::int64_t cols,
                  double* const* out);
  void col_groups_multi(const std::vector<Op>& ops, const void* a, std::int64_t rows,
                        std::int64_t cols, double* const* out);

  std::unique_ptr<ReduceEngine> inner_;
  DType dtype_;
  MissingValues missing_;
  bool cache_pieces_;
  std::vector<unsigned char> scratch_;
};

// Whether reductions of `ops` with `missing` need the masking engine (missing values or Count).
bool needs_masking(const std::vector<Op>& ops, const MissingValues& missing);
// The ops a reduction computes to finish `ops`: `ops`, plus Count when something may be
// skipped and Mean, Min or Max needs the number of valid elements.
std::vector<Op> with_counts(const std::vector<Op>& ops, const MissingValues& missing);
// Turns combined values into results like finalize_all (Mean divides by n, Norm2 takes
// sqrt), but with `counts` (the Count values along the same axis; null when nothing is skipped)
// Mean divides by the count of its own row, column or matrix, and Min and Max of no valid
// element are NaN.
void finalize_counted(Op op, std::vector<double>& v, const std::vector<double>* counts, double n);

} // namespace tessera
