// Parsing and firing of injected faults (TESSERA_FAULT=read:rank=1:chunk=3).
#include "ops/out_of_core_fault.hpp"

#include <charconv>
#include <cstdlib>

#include "core/settings.hpp"
#include "core/throw.hpp"

namespace tessera::ops::detail {

namespace {

const char* site_name(FaultSite s) noexcept {
  switch (s) {
  case FaultSite::Read:
    return "read";
  case FaultSite::Write:
    return "write";
  case FaultSite::Compute:
    break;
  }
  return "compute";
}

[[noreturn]] void bad_spec(std::string_view spec) {
  TESSERA_THROW(InputError,
                "fault injection spec '{}' is not SIDE:rank=R:chunk=C with SIDE read, write or "
                "compute (e.g. read:rank=1:chunk=3)",
                spec);
}

template <class Int>
Int parse_field(std::string_view part, std::string_view key, std::string_view spec) {
  if (part.substr(0, key.size()) != key)
    bad_spec(spec);
  part.remove_prefix(key.size());
  Int v{};
  const auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), v);
  if (ec != std::errc() || end != part.data() + part.size() || v < 0)
    bad_spec(spec);
  return v;
}

} // namespace

std::optional<FaultSpec> parse_fault(std::string_view spec) {
  if (spec.empty())
    return std::nullopt;
  const auto c1 = spec.find(':');
  const auto c2 = c1 == std::string_view::npos ? c1 : spec.find(':', c1 + 1);
  if (c2 == std::string_view::npos)
    bad_spec(spec);
  const std::string_view side = spec.substr(0, c1);
  FaultSpec f;
  if (side == "read")
    f.site = FaultSite::Read;
  else if (side == "write")
    f.site = FaultSite::Write;
  else if (side == "compute")
    f.site = FaultSite::Compute;
  else
    bad_spec(spec);
  f.rank = parse_field<int>(spec.substr(c1 + 1, c2 - c1 - 1), "rank=", spec);
  f.chunk = parse_field<std::int64_t>(spec.substr(c2 + 1), "chunk=", spec);
  f.text = std::string(spec);
  return f;
}

std::optional<FaultSpec> fault_from(const std::string& option) {
  if (option == "none")
    return std::nullopt;
  if (!option.empty())
    return parse_fault(option);
  // TESSERA_FAULT acts only with TESSERA_TEST_HOOKS=1 (core/settings.hpp).
  const std::optional<std::string> env = settings::raw(settings::Setting::Fault);
  return parse_fault(env ? std::string_view(*env) : std::string_view());
}

void inject_fault(const std::optional<FaultSpec>& fault, FaultSite site, int rank,
                  std::int64_t chunk) {
  if (!fault || fault->site != site || fault->rank != rank || fault->chunk != chunk)
    return;
  if (site == FaultSite::Compute)
    TESSERA_THROW(InternalError, "injected fault ({}): compute of chunk {} failed on rank {}",
                  fault->text, chunk, rank);
  TESSERA_THROW(IoError, "injected fault ({}): {} of chunk {} failed on rank {}", fault->text,
                site_name(site), chunk, rank);
}

} // namespace tessera::ops::detail
