// lc: least connections, minimising the LVS overhead 256*active + inactive (ip_vs_lc.c).
// Weights only gate eligibility (0 = quiesced); they do not scale the load.
#pragma once

#include "sched/scheduler.h"

namespace vsc::sched {

class LeastConnectionScheduler final : public Scheduler {
 public:
  std::string_view name() const override { return "lc"; }
  // Stateless: nothing is derived from the backend set.
  std::optional<size_t> Pick(std::span<const Backend> backends, const Flow& flow) override;
};

}  // namespace vsc::sched
