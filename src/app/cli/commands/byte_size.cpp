#include "cli/commands/byte_size.hpp"

#include <cctype>
#include <charconv>
#include <cmath>
#include <utility>

#include "core/throw.hpp"

namespace tessera::app {

std::size_t parse_byte_size(std::string_view text, std::string_view what) {
  const auto bad = [&]() {
    TESSERA_THROW(InputError,
                  "{}: '{}' is not a size (expected a positive number of bytes with an optional "
                  "unit: 4096, 512MiB, 2GiB, 1.5GB)",
                  what, text);
  };
  std::size_t i = 0;
  while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.'))
    ++i;
  if (i == 0)
    bad();
  double value = 0.0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + i, value);
  if (ec != std::errc() || end != text.data() + i)
    bad();
  std::string unit(text.substr(i));
  while (!unit.empty() && unit.front() == ' ')
    unit.erase(0, 1);
  static const std::pair<const char*, double> units[] = {{"", 1.0},
                                                         {"B", 1.0},
                                                         {"k", 1e3},
                                                         {"K", 1e3},
                                                         {"kB", 1e3},
                                                         {"KB", 1e3},
                                                         {"M", 1e6},
                                                         {"MB", 1e6},
                                                         {"G", 1e9},
                                                         {"GB", 1e9},
                                                         {"T", 1e12},
                                                         {"TB", 1e12},
                                                         {"KiB", 1024.0},
                                                         {"MiB", 1048576.0},
                                                         {"GiB", 1073741824.0},
                                                         {"TiB", 1099511627776.0}};
  for (const auto& [name, factor] : units) {
    if (unit == name) {
      const double bytes = std::floor(value * factor);
      if (!(bytes >= 1.0) || bytes > 1.8e19)
        bad();
      return static_cast<std::size_t>(bytes);
    }
  }
  bad();
  return 0;
}

} // namespace tessera::app
