#include "sched/dwlc.h"

#include <cmath>

#include "sched/least_cost.h"

namespace vsc::sched {

double DynamicWeight(double response_ms, double reference_ms) {
  const double w = reference_ms - response_ms;
  return w > 0 ? w : 0;  // also 0 for an infinite response time
}

bool DwlcWeightMoved(double published_ms, double now_ms, double reference_ms) {
  const double moved =
      DynamicWeight(published_ms, reference_ms) - DynamicWeight(now_ms, reference_ms);
  return (published_ms == 0) != (now_ms == 0) || std::abs(moved) >= 0.02 * reference_ms;
}

double DwlcWeight(const Backend& b, double reference_ms) {
  if (b.weight == 0) return 0;                // an operator's quiesce outranks any measurement
  if (!(b.response_ms > 0)) return b.weight;  // not measured yet (0 or NaN)
  return DynamicWeight(b.response_ms, reference_ms);
}

std::optional<size_t> DynamicWeightedLeastConnectionScheduler::Pick(
    std::span<const Backend> backends, const Flow& /*flow*/) {
  std::optional<size_t> least;
  double least_overhead = 0;
  double least_weight = 1;
  for (size_t i = 0; i < backends.size(); ++i) {
    const Backend& b = backends[i];
    if (!CanTakeNewWork(b)) continue;
    const double w = DwlcWeight(b, reference_ms_);
    if (!(w > 0)) continue;
    // Overheads stay below 2^41, so they are exact as doubles.
    const double overhead = static_cast<double>(ConnOverhead(b));
    if (!least || least_overhead * w > overhead * least_weight) {
      least = i;
      least_overhead = overhead;
      least_weight = w;
    }
  }
  if (least || !fallback_when_saturated_) return least;
  return PickLeastCostPerWeight(backends, [](const Backend& b) { return ConnOverhead(b); });
}

}  // namespace vsc::sched
