// nq: never queue. The first idle server (active == 0) in list order if there is one, else sed
// (ip_vs_nq.c).
#pragma once

#include "sched/scheduler.h"

namespace vsc::sched {

class NeverQueueScheduler final : public Scheduler {
 public:
  std::string_view name() const override { return "nq"; }
  // Stateless: nothing is derived from the backend set.
  std::optional<size_t> Pick(std::span<const Backend> backends, const Flow& flow) override;
};

}  // namespace vsc::sched
