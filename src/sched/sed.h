// sed: shortest expected delay, minimising (active + 1) / weight (ip_vs_sed.c; Weinrib &
// Shenker). Only active connections count.
#pragma once

#include "sched/scheduler.h"

namespace vsc::sched {

class ShortestExpectedDelayScheduler final : public Scheduler {
 public:
  std::string_view name() const override { return "sed"; }
  // Stateless: nothing is derived from the backend set.
  std::optional<size_t> Pick(std::span<const Backend> backends, const Flow& flow) override;
};

}  // namespace vsc::sched
