// rr: round robin over the backends that can take new work (seed 000 §3.4.1, LVS ip_vs_rr).
#pragma once

#include "sched/scheduler.h"

namespace vsc::sched {

class RoundRobinScheduler final : public Scheduler {
 public:
  std::string_view name() const override { return "rr"; }
  // No table: Adopt only keeps the cursor inside the new backend list.
  void Adopt(std::shared_ptr<const SchedTable> table, std::span<const Backend> backends) override;
  std::optional<size_t> Pick(std::span<const Backend> backends, const Flow& flow) override;

 private:
  // Index of the last server picked; starts at n-1 so the first pick is index 0 (seed 000).
  size_t last_ = static_cast<size_t>(-1);
};

}  // namespace vsc::sched
