// dwlc: dynamic weighted least connections (seed 003). Each server's weight is derived from the
// response time T it reports (EWMA, ms): w = reference - T, and 0 once T >= reference (700 ms in
// the seed: the server is saturated and takes no new work). Then wlc with those weights.
#pragma once

#include "sched/scheduler.h"

namespace vsc::sched {

// Seed 003 formula (1): max(0, reference_ms - response_ms). 700 - T for the default reference.
double DynamicWeight(double response_ms, double reference_ms);

// The weight dwlc schedules `b` with: 0 when quiesced (configured weight 0), the configured
// weight while nothing has been measured (response_ms <= 0 or NaN), else DynamicWeight().
double DwlcWeight(const Backend& b, double reference_ms);

// Whether a response time that moved from `published_ms` to `now_ms` changes the dynamic weight
// by at least 2 % of the reference (14 ms at 700): worth a new view for the workers; smaller
// moves are noise that would rebuild views at every probe.
bool DwlcWeightMoved(double published_ms, double now_ms, double reference_ms);

class DynamicWeightedLeastConnectionScheduler final : public Scheduler {
 public:
  // `reference_ms` > 0 (checked by MakeScheduler). See SchedulerOptions for the fallback.
  DynamicWeightedLeastConnectionScheduler(double reference_ms, bool fallback_when_saturated)
      : reference_ms_(reference_ms), fallback_when_saturated_(fallback_when_saturated) {}

  std::string_view name() const override { return "dwlc"; }
  // Stateless: weights are derived from the live response times at every pick.
  std::optional<size_t> Pick(std::span<const Backend> backends, const Flow& flow) override;

 private:
  double reference_ms_;
  bool fallback_when_saturated_;
};

}  // namespace vsc::sched
