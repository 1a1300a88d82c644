#include "core/backend.hpp"

#include "core/throw.hpp"

namespace tessera {

std::string_view backend_name(Backend b) noexcept {
  switch (b) {
  case Backend::Auto:
    return "auto";
  case Backend::Cpu:
    return "cpu";
  case Backend::Cuda:
    return "cuda";
  }
  return "?";
}

Backend parse_backend(std::string_view s) {
  if (s == "auto")
    return Backend::Auto;
  if (s == "cpu")
    return Backend::Cpu;
  if (s == "cuda" || s == "gpu")
    return Backend::Cuda;
  TESSERA_THROW(InputError, "unknown backend '{}' (expected auto, cpu or cuda)", s);
}

} // namespace tessera
