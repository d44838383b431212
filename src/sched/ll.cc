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
  for (size_t i = 0; i < backends.size(); ++i) {
    const Backend& b = backends[i];
    if (!CanTakeNewWork(b)) continue;
    if (!best) {
      best = i;
      continue;
    }
    const Backend& c = backends[*best];
    const double load = LoadOf(b);
    const double best_load = LoadOf(c);
    bool better = false;
    if (load != best_load) {
      better = load < best_load;
    } else if (b.weight != c.weight) {
      better = b.weight > c.weight;
    } else {
      better = b.active < c.active;
    }
    if (better) best = i;
  }
  return best;
}

}  // namespace vsc::sched
