// Scheduler: picks the real server for a new flow (DESIGN.md §6).
//
// Pure: no I/O, no clock, no threads, deterministic given the inputs and the seed. One instance
// per worker thread per virtual service; it is not thread safe and keeps its own cursor state
// (round-robin position, wrr current weight, prebuilt tables). The caller keeps the backend
// vector; the scheduler only sees it through std::span during a call.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string_view>

#include "common/status.h"
#include "sched/backend.h"

namespace vsc::sched {

class Scheduler {
 public:
  virtual ~Scheduler() = default;

  // The ipvsadm name: "rr", "wlc", ...
  virtual std::string_view name() const = 0;

  // Rebuilds derived tables (wrr cycle, sh buckets, Maglev table...) for a new set of backends.
  // Called on the owning worker thread whenever the published view changes (membership,
  // order, weights, keys). Load figures, counters and availability need no Rebuild: Pick reads
  // them live. Cost: microseconds, except mh (about 1 ms for M = 65537, see sched_bench).
  virtual void Rebuild(std::span<const Backend> backends) = 0;

  // Picks an index into `backends` (same size/order as the last Rebuild; counters and
  // availability may have changed since) or std::nullopt when no backend can take new work.
  // Never returns a backend for which CanTakeNewWork() is false.
  virtual std::optional<size_t> Pick(std::span<const Backend> backends, const Flow& flow) = 0;
};

struct SchedulerOptions {
  uint32_t mh_table_size = 65537;   // Maglev table size M; must be prime (Maglev §3.4)
  double dwlc_reference_ms = 700;   // seed 003: w = reference - T, 0 when T >= reference
  uint64_t seed = 1;                // salts the hashes of mh; equal seeds give equal tables
  // dwlc: when every usable server has a derived weight of 0 (all at or over the reference),
  // schedule by configured weights instead of refusing all new work. Refusing would starve
  // the servers of the requests that refresh their response-time EWMA, so a saturated
  // cluster could never recover. false = the seed's letter: no server, no pick.
  bool dwlc_fallback_when_saturated = true;
};

// Makes the scheduler called `name` (one of SchedulerNames()). InvalidArgument for an unknown
// name (the message lists the valid ones) or for bad options (mh_table_size not a prime in
// [7, 16777216], dwlc_reference_ms not positive and finite).
Result<std::unique_ptr<Scheduler>> MakeScheduler(std::string_view name,
                                                 const SchedulerOptions& options = {});

// "rr", "wrr", "sh", "lc", "wlc", "sed", "nq", "ll", "mh", "dwlc", in that order.
std::span<const std::string_view> SchedulerNames();

}  // namespace vsc::sched
