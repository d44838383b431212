#include "sched/lc.h"

namespace vsc::sched {

std::optional<size_t> LeastConnectionScheduler::Pick(std::span<const Backend> backends,
                                                     const Flow& /*flow*/) {
  std::optional<size_t> least;
  uint64_t least_overhead = 0;
  for (size_t i = 0; i < backends.size(); ++i) {
    if (!CanTakeNewWork(backends[i])) continue;
    const uint64_t overhead = ConnOverhead(backends[i]);
    if (!least || overhead < least_overhead) {
      least = i;
      least_overhead = overhead;
    }
  }
  return least;
}

}  // namespace vsc::sched
