#include "sched/sed.h"

#include "sched/least_cost.h"

namespace vsc::sched {

std::optional<size_t> ShortestExpectedDelayScheduler::Pick(std::span<const Backend> backends,
                                                           const Flow& /*flow*/) {
  return PickLeastCostPerWeight(
      backends, [](const Backend& b) { return static_cast<uint64_t>(b.active) + 1; });
}

}  // namespace vsc::sched
