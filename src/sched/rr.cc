#include "sched/rr.h"

namespace vsc::sched {

void RoundRobinScheduler::Adopt(std::shared_ptr<const SchedTable> /*table*/,
                                std::span<const Backend> backends) {
  // Keep the position across view changes, as LVS keeps its list pointer, so a weight change
  // does not send the next flow back to server 0.
  if (backends.empty()) {
    last_ = static_cast<size_t>(-1);
  } else if (last_ >= backends.size()) {
    last_ = backends.size() - 1;
  }
}

std::optional<size_t> RoundRobinScheduler::Pick(std::span<const Backend> backends,
                                                const Flow& /*flow*/) {
  const size_t n = backends.size();
  if (n == 0) return std::nullopt;
  size_t j = last_ < n ? last_ : n - 1;
  // n steps visit every index once, ending on the previous pick itself.
  for (size_t step = 0; step < n; ++step) {
    j = (j + 1 == n) ? 0 : j + 1;
    if (CanTakeNewWork(backends[j])) {
      last_ = j;
      return j;
    }
  }
  return std::nullopt;
}

}  // namespace vsc::sched
