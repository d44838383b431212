// The scan shared by wlc, sed and nq: the usable backend with the smallest cost/weight.
//
// Compared by cross-multiplication as LVS does (`loh * w_d > doh * w_least`), in 128 bits so
// that 256*active + inactive times a 32-bit weight cannot overflow. Ties keep the earlier
// backend, because the comparison is strict (LVS list order).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "sched/backend.h"

namespace vsc::sched {

template <typename CostFn>
std::optional<size_t> PickLeastCostPerWeight(std::span<const Backend> backends, CostFn cost) {
  std::optional<size_t> least;
  unsigned __int128 least_cost = 0;
  unsigned __int128 least_weight = 1;
  for (size_t i = 0; i < backends.size(); ++i) {
    const Backend& b = backends[i];
    if (!CanTakeNewWork(b)) continue;
    const unsigned __int128 c = cost(b);
    const unsigned __int128 w = b.weight;
    if (!least || least_cost * w > c * least_weight) {
      least = i;
      least_cost = c;
      least_weight = w;
    }
  }
  return least;
}

}  // namespace vsc::sched
