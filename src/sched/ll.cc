#include "sched/ll.h"

#include <cmath>
#include <limits>

namespace vsc::sched {
namespace {

// A missing or garbled report (NaN, negative) must not make a server look idle.
double LoadOf(const Backend& b) {
  if (std::isnan(b.run_queue)) return std::numeric_limits<double>::infinity();
  return b.run_queue < 0 ? 0 : b.run_queue;
}

}  // namespace

std::optional<size_t> LeastLoadScheduler::Pick(std::span<const Backend> backends,
                                               const Flow& /*flow*/) {
  std::optional<size_t> best;
  double best_load = 0;
  uint32_t best_weight = 0;
  uint32_t best_active = 0;
  for (size_t i = 0; i < backends.size(); ++i) {
    const Backend& b = backends[i];
    if (!CanTakeNewWork(b)) continue;
    const double load = LoadOf(b);
    bool better = !best;
    if (!better) {
      if (load != best_load) {
        better = load < best_load;
      } else if (b.weight != best_weight) {
        better = b.weight > best_weight;
      } else {
        better = b.active < best_active;
      }
    }
    if (better) {
      best = i;
      best_load = load;
      best_weight = b.weight;
      best_active = b.active;
    }
  }
  return best;
}

}  // namespace vsc::sched
