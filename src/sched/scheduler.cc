#include "sched/scheduler.h"

#include <array>
#include <cmath>
#include <string>

#include "sched/dwlc.h"
#include "sched/lc.h"
#include "sched/maglev_table.h"
#include "sched/ll.h"
#include "sched/mh.h"
#include "sched/nq.h"
#include "sched/rr.h"
#include "sched/sed.h"
#include "sched/sh.h"
#include "sched/wlc.h"
#include "sched/wrr.h"

namespace vsc::sched {
namespace {

constexpr std::array<std::string_view, 10> kNames = {"rr",  "wrr", "sh", "lc", "wlc",
                                                     "sed", "nq",  "ll", "mh", "dwlc"};

// Large enough for 100 x N with hundreds of servers (Maglev §3.4), small enough that a
// per-worker table stays in the tens of megabytes at most.
constexpr uint32_t kMinTableSize = 7;
constexpr uint32_t kMaxTableSize = 1u << 24;

std::string NameList() {
  std::string out;
  for (std::string_view n : kNames) {
    if (!out.empty()) out += ", ";
    out += n;
  }
  return out;
}

}  // namespace

std::span<const std::string_view> SchedulerNames() { return kNames; }

Result<std::unique_ptr<Scheduler>> MakeScheduler(std::string_view name,
                                                 const SchedulerOptions& options) {
  if (name == "rr") return std::unique_ptr<Scheduler>(new RoundRobinScheduler());
  if (name == "wrr") return std::unique_ptr<Scheduler>(new WeightedRoundRobinScheduler());
  if (name == "sh") return std::unique_ptr<Scheduler>(new SourceHashScheduler());
  if (name == "lc") return std::unique_ptr<Scheduler>(new LeastConnectionScheduler());
  if (name == "wlc") return std::unique_ptr<Scheduler>(new WeightedLeastConnectionScheduler());
  if (name == "sed") return std::unique_ptr<Scheduler>(new ShortestExpectedDelayScheduler());
  if (name == "nq") return std::unique_ptr<Scheduler>(new NeverQueueScheduler());
  if (name == "ll") return std::unique_ptr<Scheduler>(new LeastLoadScheduler());
  if (name == "mh") {
    const uint32_t m = options.mh_table_size;
    if (m < kMinTableSize || m > kMaxTableSize || !IsPrime(m)) {
      return InvalidArgument("mh table size " + std::to_string(m) +
                             " is not a prime between " + std::to_string(kMinTableSize) +
                             " and " + std::to_string(kMaxTableSize) +
                             "; use a prime such as 65537 (at least 100 x the server count)");
    }
    return std::unique_ptr<Scheduler>(new MaglevScheduler(m, options.seed));
  }
  if (name == "dwlc") {
    const double ref = options.dwlc_reference_ms;
    if (!std::isfinite(ref) || ref <= 0) {
      return InvalidArgument("dwlc reference response time must be a positive number of ms, got " +
                             std::to_string(ref) + "; the seed's value is 700");
    }
    return std::unique_ptr<Scheduler>(
        new DynamicWeightedLeastConnectionScheduler(ref, options.dwlc_fallback_when_saturated));
  }
  return InvalidArgument("unknown scheduler \"" + std::string(name) + "\"; valid schedulers: " +
                         NameList());
}

Result<std::shared_ptr<const SchedTable>> BuildSchedTable(std::string_view name,
                                                          const SchedulerOptions& options,
                                                          std::span<const Backend> backends) {
  VSC_ASSIGN_OR_RETURN(std::unique_ptr<Scheduler> scheduler, MakeScheduler(name, options));
  return scheduler->BuildTable(backends);
}

}  // namespace vsc::sched
