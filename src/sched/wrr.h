// wrr: weighted round robin in the LVS / seed 000 gcd form (ip_vs_wrr.c). Weights 4, 3, 2 give
// AABABCABC each cycle: bursty by design, not nginx's smooth WRR, because that is what LVS
// operators know and what the seed specifies.
//
// The table is the cycle's shape (gcd and top weight of the positive weights), shared by the
// workers; the position in the cycle (current weight, last index) is each worker's own.
#pragma once

#include <cstdint>

#include "sched/scheduler.h"

namespace vsc::sched {

struct WrrTable final : SchedTable {
  int64_t mw = 0;  // max weight - (gcd - 1)
  int64_t di = 1;  // gcd of the positive weights
};

class WeightedRoundRobinScheduler final : public Scheduler {
 public:
  std::string_view name() const override { return "wrr"; }
  std::shared_ptr<const SchedTable> BuildTable(std::span<const Backend> backends) const override;
  void Adopt(std::shared_ptr<const SchedTable> table, std::span<const Backend> backends) override;
  const SchedTable* table() const override { return table_.get(); }
  std::optional<size_t> Pick(std::span<const Backend> backends, const Flow& flow) override;

 private:
  std::shared_ptr<const WrrTable> table_;
  size_t last_ = static_cast<size_t>(-1);  // LVS `cl`: the list head before the first pick
  int64_t cw_ = 0;                         // current weight
  int64_t mw_ = 0;                         // the table's, copied at Adopt
  int64_t di_ = 1;
};

}  // namespace vsc::sched
