// ll: least load, the server with the shortest run queue reported in heartbeats (seed 004; seed
// 000 "by load"). Ties go to the higher weight, then to fewer active flows, then to the lower
// index. The active-flow tie-break is ours: heartbeats arrive every 200 ms, and between two of
// them every idle server reports the same 0.00, so without it one server would take every new
// flow until the next report.
#pragma once

#include "sched/scheduler.h"

namespace vsc::sched {

class LeastLoadScheduler final : public Scheduler {
 public:
  std::string_view name() const override { return "ll"; }
  // Stateless: nothing is derived from the backend set.
  std::optional<size_t> Pick(std::span<const Backend> backends, const Flow& flow) override;
};

}  // namespace vsc::sched
