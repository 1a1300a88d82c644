#include "core/reduction.hpp"

#include <cmath>
#include <limits>

#include "core/throw.hpp"

namespace tessera {

namespace {
constexpr Op kAllOps[] = {Op::Sum,   Op::Min,   Op::Max,     Op::Mean,
                          Op::Norm1, Op::Norm2, Op::NormInf, Op::Count};
}

std::string_view op_name(Op op) noexcept {
  switch (op) {
  case Op::Sum:
    return "sum";
  case Op::Min:
    return "min";
  case Op::Max:
    return "max";
  case Op::Mean:
    return "mean";
  case Op::Norm1:
    return "norm1";
  case Op::Norm2:
    return "norm2";
  case Op::NormInf:
    return "norminf";
  case Op::Count:
    return "count";
  }
  return "?";
}

std::string_view axis_name(Axis a) noexcept {
  switch (a) {
  case Axis::All:
    return "all";
  case Axis::Rows:
    return "rows";
  case Axis::Cols:
    return "cols";
  }
  return "?";
}

Op parse_op(std::string_view s) {
  for (Op op : kAllOps)
    if (op_name(op) == s)
      return op;
  TESSERA_THROW(
      InputError,
      "unknown reduction '{}' (expected sum, min, max, mean, norm1, norm2, norminf or count)", s);
}

std::vector<Op> parse_ops(std::string_view list) {
  std::vector<Op> ops;
  while (!list.empty()) {
    const auto comma = list.find(',');
    const auto item = list.substr(0, comma);
    if (!item.empty())
      ops.push_back(parse_op(item));
    if (comma == std::string_view::npos)
      break;
    list.remove_prefix(comma + 1);
  }
  TESSERA_REQUIRE(!ops.empty(), InputError, "no reduction given (e.g. --op sum,norm2)");
  return ops;
}

Axis parse_axis(std::string_view s) {
  if (s == "all")
    return Axis::All;
  if (s == "rows")
    return Axis::Rows;
  if (s == "cols" || s == "columns")
    return Axis::Cols;
  TESSERA_THROW(InputError, "unknown axis '{}' (expected all, rows or cols)", s);
}

bool norm2_needs_rescue(double r) noexcept {
  return r == std::numeric_limits<double>::infinity() || r < kNorm2RescueBelow;
}

std::optional<int> norm2_rescue_exponent(double max_abs) noexcept {
  if (!(max_abs > 0.0 && max_abs < std::numeric_limits<double>::infinity()))
    return std::nullopt;
  return -std::ilogb(max_abs); // exact, subnormals included
}

double identity(Op op) noexcept {
  if (op == Op::Min)
    return std::numeric_limits<double>::infinity();
  if (op == Op::Max)
    return -std::numeric_limits<double>::infinity();
  return 0.0;
}

double combine(Op op, double a, double b) noexcept {
  if (is_sum_family(op))
    return a + b;
  if (op == Op::Min)
    return (a < b || a != a) ? a : b;
  return (a > b || a != a) ? a : b; // Max and NormInf
}

double finalize(Op op, double v, double count) noexcept {
  if (op == Op::Mean)
    return v / count;
  if (op == Op::Norm2)
    return std::sqrt(v);
  return v;
}

void finalize_all(Op op, std::vector<double>& v, double count) noexcept {
  const auto n = static_cast<std::int64_t>(v.size());
  double* x = v.data();
  if (op == Op::Mean) {
#pragma omp parallel for schedule(static) if (n > 65536)
    for (std::int64_t i = 0; i < n; ++i)
      x[i] /= count;
  } else if (op == Op::Norm2) {
#pragma omp parallel for schedule(static) if (n > 65536)
    for (std::int64_t i = 0; i < n; ++i)
      x[i] = std::sqrt(x[i]);
  }
}

double norm2_unscale(double scaled_norm, int e) noexcept {
  return std::ldexp(scaled_norm, -e);
}

const std::vector<double>& ReduceResult::operator[](Op op) const {
  for (std::size_t k = 0; k < ops.size(); ++k)
    if (ops[k] == op)
      return values.at(k);
  TESSERA_THROW(InternalError, "reduction '{}' was not computed", op_name(op));
}

} // namespace tessera
