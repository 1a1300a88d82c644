#include "core/timers.hpp"

namespace tessera {

void PhaseTimers::add(const std::string& phase, double seconds, double bytes) {
  auto& s = phases_[phase];
  s.calls += 1;
  s.seconds += seconds;
  s.bytes += bytes;
}

} // namespace tessera
