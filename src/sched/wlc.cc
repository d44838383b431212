#include "sched/wlc.h"

#include "sched/least_cost.h"

namespace vsc::sched {

std::optional<size_t> WeightedLeastConnectionScheduler::Pick(std::span<const Backend> backends,
                                                             const Flow& /*flow*/) {
  return PickLeastCostPerWeight(backends, [](const Backend& b) { return ConnOverhead(b); });
}

}  // namespace vsc::sched
