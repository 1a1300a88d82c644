// Per-rank phase timers: calls, seconds and bytes moved per named phase. The cross-rank
// timing table (max over ranks, imbalance, GB/s) is built from these in mpi/timing_table.hpp.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <string>

namespace tessera {

struct PhaseStats {
  std::int64_t calls = 0;
  double seconds = 0.0;
  double bytes = 0.0; // bytes read + written, for GB/s; 0 when it does not apply
};

class PhaseTimers {
public:
  void add(const std::string& phase, double seconds, double bytes = 0.0);
  const std::map<std::string, PhaseStats>& phases() const noexcept { return phases_; }
  void clear() { phases_.clear(); }

private:
  std::map<std::string, PhaseStats> phases_;
};

// Times a scope into a PhaseTimers entry: ScopedPhase p(timers, "transpose", bytes);
class ScopedPhase {
public:
  ScopedPhase(PhaseTimers& timers, std::string phase, double bytes = 0.0)
      : timers_(timers), phase_(std::move(phase)), bytes_(bytes),
        start_(std::chrono::steady_clock::now()) {}
  ScopedPhase(const ScopedPhase&) = delete;
  ScopedPhase& operator=(const ScopedPhase&) = delete;
  ~ScopedPhase() {
    const std::chrono::duration<double> dt = std::chrono::steady_clock::now() - start_;
    timers_.add(phase_, dt.count(), bytes_);
  }

private:
  PhaseTimers& timers_;
  std::string phase_;
  double bytes_;
  std::chrono::steady_clock::time_point start_;
};

// Seconds since an arbitrary fixed point (steady clock).
inline double wall_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

} // namespace tessera
