// PlanCache: a list in recency order (a handful of entries: a linear search is the fast one).
#include "plan_cache.hpp"

#include <algorithm>
#include <climits>
#include <utility>

#include "blacs.hpp"
#include "core/check.hpp"

namespace tessera::scalapack {

RedistributePlan* PlanCache::find(const PlanKey& key, int context) {
  auto it =
      std::find_if(entries_.begin(), entries_.end(), [&](const Entry& e) { return e.key == key; });
  // Ranks agree on the plan they found: 1 + its id, 0 for none. BLACS reduces by largest
  // magnitude, so both terms stay non-negative: the largest value and INT_MAX less the
  // smallest. One value everywhere means one earlier call made all of them, since a rank takes
  // part in each numbering and never gets an id twice.
  const int found = it == entries_.end() ? 0 : static_cast<int>(it->id) + 1;
  int bounds[2] = {found, INT_MAX - found};
  Cigamx2d(context, "All", " ", 1, 2, bounds, 1, nullptr, nullptr, -1, -1, -1);
  if (bounds[0] == 0 || bounds[0] != INT_MAX - bounds[1]) {
    ++misses_;
    return nullptr;
  }
  ++hits_;
  entries_.splice(entries_.begin(), entries_, it);
  return entries_.front().plan.get();
}

void PlanCache::insert(PlanKey key, RedistributePlan plan, MPI_Comm comm) {
  if (capacity_ == 0)
    return;
  int id = static_cast<int>(next_id_);
  CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, &id, 1, MPI_INT, MPI_MAX, comm));
  next_id_ = static_cast<std::int64_t>(id) + 1;
  // A plan found here on some ranks only was rebuilt: the new one replaces it.
  entries_.remove_if([&](const Entry& e) { return e.key == key; });
  entries_.push_front({std::move(key), id, std::make_unique<RedistributePlan>(std::move(plan))});
  // Evicting frees the plan's communicator on this rank alone, while others may keep theirs:
  // MPI_Comm_free does not wait for the other ranks in the MPI libraries we know of.
  while (static_cast<int>(entries_.size()) > capacity_)
    entries_.pop_back();
}

void PlanCache::set_capacity(int capacity) {
  capacity_ = std::max(capacity, 0);
  while (static_cast<int>(entries_.size()) > capacity_)
    entries_.pop_back();
}

PlanCacheStats PlanCache::stats() const {
  return {hits_, misses_, static_cast<int>(entries_.size()), capacity_};
}

PlanCache& plan_cache() {
  static PlanCache cache;
  return cache;
}

} // namespace tessera::scalapack
