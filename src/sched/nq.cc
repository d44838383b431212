#include "sched/nq.h"

#include "sched/least_cost.h"

namespace vsc::sched {

std::optional<size_t> NeverQueueScheduler::Pick(std::span<const Backend> backends,
                                                const Flow& /*flow*/) {
  for (size_t i = 0; i < backends.size(); ++i) {
    if (CanTakeNewWork(backends[i]) && backends[i].active == 0) return i;
  }
  return PickLeastCostPerWeight(
      backends, [](const Backend& b) { return static_cast<uint64_t>(b.active) + 1; });
}

}  // namespace vsc::sched
