// Reduction operations, axes, and the canonical summation order that makes the Sum family
// (Sum, Mean, Norm1, Norm2) bit-identical for any rank count, thread count and backend.
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
//   Axis::All  : rows are grouped in blocks of kReduceBlockRows consecutive global rows,
//       p[b] = 0.0; for i in block b, ascending: p[b] += r(i)
//       total = 0.0; for b ascending: total += p[b]          (Mean: /(rows*cols), Norm2: sqrt)
//   Axis::Cols : per column j, with the same row blocks,
//       p[b][j] = 0.0; for i in block b, ascending: p[b][j] += f(a[i][j])
//       value(j) = 0.0; for b ascending: value(j) += p[b][j]   (Mean: /rows, Norm2: sqrt)
//
// Row blocks are fixed in global row numbers, so a rank boundary may cut a block; the
// distributed plan (mpi/reduce_plan.hpp) continues such a block's sequential sum on the next
// rank, which keeps the order above exactly.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tessera {

enum class Op { Sum, Min, Max, Mean, Norm1, Norm2, NormInf };
enum class Axis { All, Rows, Cols };

inline constexpr int kSumLanes = 128;
inline constexpr std::int64_t kReduceBlockRows = 64;

std::string_view op_name(Op op) noexcept;
std::string_view axis_name(Axis a) noexcept;
// "sum", "min", "max", "mean", "norm1", "norm2", "norminf"; throws InputError otherwise.
Op parse_op(std::string_view s);
// Comma-separated list: "sum,norm2,max".
std::vector<Op> parse_ops(std::string_view list);
Axis parse_axis(std::string_view s);

// True for Sum, Mean, Norm1, Norm2: the ops whose value depends on the order of additions.
constexpr bool is_sum_family(Op op) noexcept {
  return op == Op::Sum || op == Op::Mean || op == Op::Norm1 || op == Op::Norm2;
}

// One reduction's result: one value (All), one per global row (Rows) or per column (Cols).
struct ReduceResult {
  Axis axis = Axis::All;
  std::vector<Op> ops;
  std::vector<std::vector<double>> values; // values[k] belongs to ops[k]

  const std::vector<double>& operator[](Op op) const;
  double scalar(Op op) const { return (*this)[op].at(0); }
};

} // namespace tessera
