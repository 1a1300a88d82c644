// The plans of recent pxgemr2d/pxtran calls, kept so that a program calling them again with the
// same descriptors skips the set-up (grid communicator, descriptor exchange, intersections).
//
// A plan depends on every rank's arguments, but each rank sees only its own (its descriptor's
// lld, its grid positions), and a BLACS context number may come back after blacs_gridexit for
// another grid. So a rank's key is everything it passes and sees of the grids; a call reuses a
// plan only when every rank of the context found one under its key and all of them were made by
// the same earlier call, which one small reduction over the context settles. Otherwise every rank
// builds the plan anew, together.
#pragma once

#include <cstdint>
#include <list>
#include <memory>
#include <vector>

#include <tessera/redistribute_plan.hpp>

namespace tessera::scalapack {

// Everything this rank knows that determines the plan, flattened (see plan_key in
// scalapack_calls.cpp for what goes in).
using PlanKey = std::vector<std::int64_t>;

struct PlanCacheStats {
  std::int64_t hits = 0, misses = 0;
  int size = 0, capacity = 0;
};

class PlanCache {
public:
  // The plan made by the same earlier call on every rank of the context, or null. Collective
  // over the context (one reduction of two integers).
  RedistributePlan* find(const PlanKey& key, int context);
  // Keeps a plan just built and executed; collective over `comm` (the plan's ranks), to number
  // it alike on every rank. Evicts the least recently used plan beyond the capacity.
  void insert(PlanKey key, RedistributePlan plan, MPI_Comm comm);

  // 0 keeps nothing; every rank must set the same value.
  void set_capacity(int capacity);
  PlanCacheStats stats() const;

private:
  struct Entry {
    PlanKey key;
    std::int64_t id = 0; // the same on every rank that built the plan in one call
    std::unique_ptr<RedistributePlan> plan;
  };
  std::list<Entry> entries_; // most recently used first
  std::int64_t next_id_ = 0; // above every id this process has taken part in
  int capacity_ = 16;
  std::int64_t hits_ = 0, misses_ = 0;
};

// The process's one cache (calls come from one thread at a time, as ScaLAPACK's must).
PlanCache& plan_cache();

} // namespace tessera::scalapack
