#include "core/env_choice.hpp"

#include <cstdlib>
#include <string>

#include "core/log.hpp"

namespace tessera {

int env_choice(const char* variable, std::initializer_list<std::string_view> names, int fallback) {
  const char* v = std::getenv(variable);
  if (v == nullptr || *v == '\0')
    return fallback;
  int k = 0;
  std::string accepted;
  for (const std::string_view name : names) {
    if (name == v)
      return k;
    accepted += (k > 0 ? ", " : "") + std::string(name);
    ++k;
  }
  log::warn("{}={} is not one of {}: ignored", variable, v, accepted);
  return fallback;
}

} // namespace tessera
