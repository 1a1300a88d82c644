// Reduction operations and axes (their public part: tessera/reduction.hpp), and the canonical
// summation order that makes the Sum family (Sum, Mean, Norm1, Norm2) bit-identical for any
// rank count, thread count and backend.
//
// Canonical order (every backend implements exactly this; src/cpu/reference.cpp is its plain
// serial statement and the oracle of the tests):
//
//   f(x)   = x (Sum, Mean, Min, Max), |x| (Norm1, NormInf), x*x (Norm2); computed in double
//            after converting the element to double, never fused with an add (no FMA).
//   Min/Max/NormInf combine with min/max: any order gives the same bits.
//
//   Row value  r(i), for the Sum family, uses kSumLanes lane accumulators:
//       lane[c] = 0.0; for j = c, c+kSumLanes, c+2*kSumLanes, … < cols: lane[c] += f(a[i][j])
//     then a fixed tree: for off = kSumLanes/2, …, 2, 1: for c < off: lane[c] += lane[c + off]
//     r(i) = lane[0].  (On a GPU a warp holds 4 lanes per thread: 16-byte loads, shuffles.)
//   Axis::Rows : value(i) = r(i)                     (Mean divides by cols, Norm2 takes sqrt)
//   Axis::All  : rows are grouped in blocks of kReduceBlockRows consecutive global rows, and
//     blocks in super-blocks of kReduceSuperBlocks consecutive blocks,
//       p[b] = 0.0; for i in block b, ascending: p[b] += r(i)
//       q[s] = 0.0; for b in super-block s, ascending: q[s] += p[b]
//       total = 0.0; for s ascending: total += q[s]          (Mean: /(rows*cols), Norm2: sqrt)
//   Axis::Cols : per column j, with the same row blocks and super-blocks,
//       p[b][j] = 0.0; for i in block b, ascending: p[b][j] += f(a[i][j])
//       q[s][j] = 0.0; for b in super-block s, ascending: q[s][j] += p[b][j]
//       value(j) = 0.0; for s ascending: value(j) += q[s][j]   (Mean: /rows, Norm2: sqrt)
//   Why two levels: the longest chain of dependent additions is 64 + 256 + rows/16384 instead
//   of 64 + rows/64, so the many block partials of a tall matrix are folded in parallel (a
//   million rows: 382 additions in sequence instead of 15690).
//
// Row blocks and super-blocks are fixed in global row numbers, so a rank boundary may cut one;
// the distributed plan (mpi/reduce_chain.hpp) continues such a block's and super-block's
// sequential sums on the next rank, which keeps the order above exactly. A running fold of block
// partials is then a pair (total: the closed super-blocks, open: the super-block in progress),
// and the value is total ⊕ open at the end (cpu::fold_partials, cpu::close_partials). Closing
// with an empty open super-block changes nothing: total starts at +0.0 and so is never -0.0,
// and x + 0.0 == x for every other x (for Min and Max the identity is neutral anyway).
//
// Norm2 rescue. Squares of f64 data overflow above about 2^512 and underflow below 2^-511, so
// after the pass above, each Norm2 value r = sqrt(S) (one per vector: the whole matrix for All,
// a row for Rows, a column for Cols) with r = +inf or r < kNorm2RescueBelow = 2^-480 is
// recomputed, unless M, the largest |x| of its vector, is 0 or inf (r is then exact already):
//       e  = -ilogb(M)                      (M·2^e is in [1, 2))
//       S' = the order above with f(x) = y*y, y = ldexp(x, e)   (x·2^e: exact unless subnormal)
//       value = ldexp(sqrt(S'), -e)
// Why that is enough: all terms are >= 0, so a finite S had no overflow anywhere; and r >= 2^-480
// means S >= 2^-960·(1 - 2^-53), while underflow moves each of the n squares by at most 2^-1075:
// in all n·2^-1075 < 2^-53·S for n <= 2^61, less than the rounding of one addition. After the
// scaling, S' >= 1 (M's own square) and each square is at most 4: nothing overflows, and the
// ones that underflow are off by at most 2^-1075·S' each. NaN data gives r = NaN, never rescued.
// M is the NormInf value of the vector: exact, and the same in any order.
// f32 data never needs the rescue: a nonzero f32 square is at least 2^-298, n of them at most
// n·2^256, so r is finite and below 2^-480 only when M = 0; implementations skip it for f32.
// ldexp and ilogb are exact IEEE operations (ldexp rounds, correctly, only subnormal results),
// and the rescue always runs on the host with the CPU kernels (cpu::reduce_rows_scaled,
// cpu::fold_rows_scaled) in the order above, so rescued values too have the same bits for any
// rank count, thread count and backend. It costs a pass for M (none when NormInf is computed
// alongside) and a pass for S', only for reductions that have a value to rescue.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <tessera/reduction.hpp>

namespace tessera {

inline constexpr int kSumLanes = 128;
inline constexpr std::int64_t kReduceBlockRows = 64;
inline constexpr std::int64_t kReduceSuperBlocks = 256;

// True for Sum, Mean, Norm1, Norm2: the ops whose value depends on the order of additions, and
// Count, a Sum of ones and zeros (mpi/reduce_masked.hpp) that goes the same way.
constexpr bool is_sum_family(Op op) noexcept {
  return op == Op::Sum || op == Op::Mean || op == Op::Norm1 || op == Op::Norm2 || op == Op::Count;
}

// The combine rule of the canonical order, for every backend and for the plans that combine
// their partials across ranks. The identity of op's ⊕: 0.0, +inf for Min, -inf for Max, 0.0 for
// NormInf.
double identity(Op op) noexcept;
// a ⊕ b for op: + for the Sum family, min and max (NaN propagates, so any order gives the same
// answer).
double combine(Op op, double a, double b) noexcept;
// Turns a combined value into the result: Mean divides by `count`, Norm2 takes sqrt.
double finalize(Op op, double v, double count) noexcept;
// finalize over every value of v, in parallel (along Rows these are millions: for 9000001 × 3
// f32 a serial pass over them took longer than the read of the matrix).
void finalize_all(Op op, std::vector<double>& v, double count) noexcept;

// The Norm2 rescue (above): norms r of the ordinary pass below this, or +inf, are recomputed.
inline constexpr double kNorm2RescueBelow = 0x1p-480;
// r == +inf || r < kNorm2RescueBelow (false for NaN).
bool norm2_needs_rescue(double r) noexcept;
// e with max_abs·2^e in [1, 2); nullopt when max_abs is 0, inf or NaN (the ordinary r stands).
std::optional<int> norm2_rescue_exponent(double max_abs) noexcept;
// The rescued norm from sqrt(S') and e: scaled_norm·2^-e (std::ldexp).
double norm2_unscale(double scaled_norm, int e) noexcept;

} // namespace tessera
