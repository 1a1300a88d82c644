// Fault injection for the out-of-core pipelines: make one side fail on one rank at one chunk,
// so tests can check that both threads of every rank stop, every rank reports the cause and no
// half-written output is left. Spec: "SIDE:rank=R:chunk=C", SIDE one of read, write, compute
// (TESSERA_FAULT in the environment, or OutOfCoreOptions::fault).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tessera::ops::detail {

enum class FaultSite { Read, Write, Compute };

struct FaultSpec {
  FaultSite site = FaultSite::Read;
  int rank = 0;
  std::int64_t chunk = 0;
  std::string text; // as given, for messages
};

// Parses a spec; std::nullopt for an empty one. InputError naming the expected form otherwise.
std::optional<FaultSpec> parse_fault(std::string_view spec);
// The option when set, else TESSERA_FAULT, else none.
std::optional<FaultSpec> fault_from(const std::string& option);

// Throws the injected error when `fault` names this site, rank and chunk: IoError for read and
// write (as a failing disk would), InternalError for compute (as a bug would).
void inject_fault(const std::optional<FaultSpec>& fault, FaultSite site, int rank,
                  std::int64_t chunk);

} // namespace tessera::ops::detail
