// Resolving --axes against the input's dimensions (permute_axes.hpp).
#include "ops/permute_axes.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

#include "core/throw.hpp"

namespace tessera::ops {

namespace {

std::vector<std::string> split_axes(const std::string& spec) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = spec.find(',', start);
    std::string part = spec.substr(start, comma == std::string::npos ? comma : comma - start);
    part.erase(0, part.find_first_not_of(' '));
    part.erase(part.find_last_not_of(' ') + 1);
    parts.push_back(std::move(part));
    if (comma == std::string::npos)
      return parts;
    start = comma + 1;
  }
}

// The index a part names: a dimension name first (a netCDF dimension may be called "0"), then
// a decimal index; -1 when neither.
int axis_of(const std::string& part, const std::vector<std::string>& names) {
  const auto named = std::find(names.begin(), names.end(), part);
  if (!part.empty() && named != names.end())
    return static_cast<int>(named - names.begin());
  int index = -1;
  const auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), index);
  if (ec != std::errc{} || end != part.data() + part.size() || part.empty())
    return -1;
  return index >= 0 && index < static_cast<int>(names.size()) ? index : -1;
}

} // namespace

std::string describe_dimensions(const std::vector<std::string>& names) {
  std::vector<std::string> shown;
  for (std::size_t k = 0; k < names.size(); ++k)
    shown.push_back(names[k].empty() ? fmt::format("dim{}", k) : names[k]);
  return fmt::format("({})", fmt::join(shown, ", "));
}

std::vector<int> resolve_axes(const std::string& spec, const std::vector<std::string>& names,
                              const std::string& what) {
  const auto rank = static_cast<int>(names.size());
  if (spec.empty()) {
    if (rank == 2)
      return {1, 0};
    std::vector<int> reversed;
    for (int k = rank; k-- > 0;)
      reversed.push_back(k);
    TESSERA_THROW(InputError,
                  "{} has rank {}, dimensions {}: name the output's order of dimensions with "
                  "--axes, by name or by index (e.g. --axes {})",
                  what, rank, describe_dimensions(names), fmt::join(reversed, ","));
  }
  std::vector<int> axes;
  for (const std::string& part : split_axes(spec)) {
    const int a = axis_of(part, names);
    TESSERA_REQUIRE(a >= 0, InputError,
                    "--axes {}: '{}' is neither a dimension of {} {} nor an index 0..{}", spec,
                    part, what, describe_dimensions(names), rank - 1);
    TESSERA_REQUIRE(std::find(axes.begin(), axes.end(), a) == axes.end(), InputError,
                    "--axes {}: dimension '{}' of {} is named twice", spec, part, what);
    axes.push_back(a);
  }
  TESSERA_REQUIRE(static_cast<int>(axes.size()) == rank, InputError,
                  "--axes {}: {} has {} dimensions {}; name every one of them once", spec, what,
                  rank, describe_dimensions(names));
  return axes;
}

std::vector<int> resolve_dims(const std::string& spec, const std::vector<std::string>& names,
                              const std::string& what) {
  std::vector<int> dims;
  for (const std::string& part : split_axes(spec)) {
    const int d = axis_of(part, names);
    TESSERA_REQUIRE(d >= 0, InputError,
                    "--dims {}: '{}' is neither a dimension of {} {} nor an index 0..{}", spec,
                    part, what, describe_dimensions(names), names.size() - 1);
    TESSERA_REQUIRE(std::find(dims.begin(), dims.end(), d) == dims.end(), InputError,
                    "--dims {}: dimension '{}' of {} is named twice", spec, part, what);
    dims.push_back(d);
  }
  std::sort(dims.begin(), dims.end());
  return dims;
}

} // namespace tessera::ops
