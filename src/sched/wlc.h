// wlc: weighted least connections, minimising (256*active + inactive) / weight, compared
// without division as LVS does (ip_vs_wlc.c; ipvsadm's default scheduler).
#pragma once

#include "sched/scheduler.h"

namespace vsc::sched {

class WeightedLeastConnectionScheduler final : public Scheduler {
 public:
  std::string_view name() const override { return "wlc"; }
  // Stateless: nothing is derived from the backend set.
  std::optional<size_t> Pick(std::span<const Backend> backends, const Flow& flow) override;
};

}  // namespace vsc::sched
