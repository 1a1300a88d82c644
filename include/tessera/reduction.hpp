// Reduction operations, axes and results. The Sum family (Sum, Mean, Norm1, Norm2) is
// reproducible: partial sums over fixed blocks of 64 global rows, combined in a fixed order, so
// the bits of a result do not change with the number of ranks, threads or the backend.
#pragma once

#include <limits>
#include <string_view>
#include <vector>

#include <tessera/export.h>

namespace tessera {

// Count: the number of valid (not missing) elements, exact.
enum class Op { Sum, Min, Max, Mean, Norm1, Norm2, NormInf, Count };
// All: one value for the whole matrix; Rows: one per global row; Cols: one per column.
enum class Axis { All, Rows, Cols };

TESSERA_API std::string_view op_name(Op op) noexcept;
TESSERA_API std::string_view axis_name(Axis a) noexcept;
// "sum", "min", "max", "mean", "norm1", "norm2", "norminf", "count"; throws InputError otherwise.
TESSERA_API Op parse_op(std::string_view s);
// Comma-separated list: "sum,norm2,max".
TESSERA_API std::vector<Op> parse_ops(std::string_view list);
// "all", "rows", "cols"; throws InputError otherwise.
TESSERA_API Axis parse_axis(std::string_view s);

// Which elements a reduction skips, and what the stored numbers stand for (the CF conventions
// of netCDF files: _FillValue, missing_value, scale_factor, add_offset). A skipped element
// counts for nothing: Sum, Norm1, Norm2 and NormInf of nothing are 0, Mean, Min and Max NaN,
// Count 0. The default skips nothing: IEEE semantics, one NaN makes the Sum family, Min and
// Max NaN.
struct TESSERA_API MissingValues {
  bool skip_nan = false;      // NaN elements are missing
  std::vector<double> values; // elements equal to one of these are missing (a NaN here: any NaN)
  // Elements outside [valid_min, valid_max] are missing (the CF attributes valid_min, valid_max
  // and valid_range; compared with the stored x).
  double valid_min = -std::numeric_limits<double>::infinity();
  double valid_max = std::numeric_limits<double>::infinity();
  // Stored x stands for x * scale_factor + add_offset (computed in double); missing values are
  // compared with the stored x.
  double scale_factor = 1.0;
  double add_offset = 0.0;

  bool packed() const noexcept { return scale_factor != 1.0 || add_offset != 0.0; }
  // True when some element may be skipped or transformed.
  bool any() const noexcept { return skip_nan || !values.empty() || packed() || ranged(); }
  bool ranged() const noexcept {
    return valid_min != -std::numeric_limits<double>::infinity() ||
           valid_max != std::numeric_limits<double>::infinity();
  }
};

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
