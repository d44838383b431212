// wrr: weighted round robin in the LVS / seed 000 gcd form (ip_vs_wrr.c). Weights 4, 3, 2 give
// AABABCABC each cycle: bursty by design, not nginx's smooth WRR, because that is what LVS
// operators know and what the seed specifies.
#pragma once

#include <cstdint>

#include "sched/scheduler.h"

namespace vsc::sched {

class WeightedRoundRobinScheduler final : public Scheduler {
 public:
  std::string_view name() const override { return "wrr"; }
  void Rebuild(std::span<const Backend> backends) override;
  std::optional<size_t> Pick(std::span<const Backend> backends, const Flow& flow) override;

 private:
  size_t last_ = static_cast<size_t>(-1);  // LVS `cl`: the list head before the first pick
  int64_t cw_ = 0;                         // current weight
  int64_t mw_ = 0;                         // max weight - (gcd - 1)
  int64_t di_ = 1;                         // gcd of the positive weights
};

}  // namespace vsc::sched
