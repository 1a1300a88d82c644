// Reduction operations, axes and results. The Sum family (Sum, Mean, Norm1, Norm2) is
// reproducible: partial sums over fixed blocks of 64 global rows, combined in a fixed order, so
// the bits of a result do not change with the number of ranks, threads or the backend.
#pragma once

#include <string_view>
#include <vector>

#include <tessera/export.h>

namespace tessera {

enum class Op { Sum, Min, Max, Mean, Norm1, Norm2, NormInf };
// All: one value for the whole matrix; Rows: one per global row; Cols: one per column.
enum class Axis { All, Rows, Cols };

TESSERA_API std::string_view op_name(Op op) noexcept;
TESSERA_API std::string_view axis_name(Axis a) noexcept;
// "sum", "min", "max", "mean", "norm1", "norm2", "norminf"; throws InputError otherwise.
TESSERA_API Op parse_op(std::string_view s);
// Comma-separated list: "sum,norm2,max".
TESSERA_API std::vector<Op> parse_ops(std::string_view list);
// "all", "rows", "cols"; throws InputError otherwise.
TESSERA_API Axis parse_axis(std::string_view s);

// One reduction's result: one value (All), one per global row (Rows) or per column (Cols).
struct TESSERA_API ReduceResult {
  Axis axis = Axis::All;
  std::vector<Op> ops;
  std::vector<std::vector<double>> values; // values[k] belongs to ops[k]

  // The values of `op`; throws InputError when op was not asked for.
  const std::vector<double>& operator[](Op op) const;
  double scalar(Op op) const { return (*this)[op].at(0); }
};

} // namespace tessera
