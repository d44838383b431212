// Scheduler: picks the real server for a new flow (DESIGN.md §6).
//
// Pure: no I/O, no clock, no threads, deterministic given the inputs and the seed. One instance
// per worker thread per virtual service; it is not thread safe and keeps its own cursor state
// (round-robin position, wrr current weight). Derived tables (sh buckets, the Maglev slots, the
// wrr cycle's gcd and top weight) are SchedTables: immutable values built once, on the control
// thread (BuildSchedTable), and shared read-only by every worker's instance (Adopt), so a
// worker never rebuilds what another could share (DESIGN §4). The caller keeps the backend
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

// The immutable table a scheduler derives from its backends' order, keys and weights. Built by
// Scheduler::BuildTable, read concurrently by any number of schedulers of the same kind.
class SchedTable {
 public:
  virtual ~SchedTable() = default;
};

class Scheduler {
 public:
  virtual ~Scheduler() = default;

  // The ipvsadm name: "rr", "wlc", ...
  virtual std::string_view name() const = 0;

  // The derived table for a set of backends (wrr cycle, sh buckets, Maglev slots), or nullptr
  // for schedulers that need none. It depends only on the backends' order, keys and weights:
  // load figures, counters and availability never need a new table (Pick reads them live).
  // Cost: microseconds, except mh (about 1 ms for M = 65537, see sched_bench).
  virtual std::shared_ptr<const SchedTable> BuildTable(std::span<const Backend> backends) const {
    (void)backends;
    return nullptr;
  }

  // Takes `table` (from BuildTable of a scheduler of the same name and options, for these
  // backends) and carries the cursor over to it. Cheap: no table is built here. A table of
  // another kind is a broken invariant and aborts.
  virtual void Adopt(std::shared_ptr<const SchedTable> table, std::span<const Backend> backends) {
    (void)table;
    (void)backends;
  }

  // BuildTable then Adopt: for a scheduler that shares its table with nobody (tests, tools).
  void Rebuild(std::span<const Backend> backends) { Adopt(BuildTable(backends), backends); }

  // The table adopted last, or nullptr.
  virtual const SchedTable* table() const { return nullptr; }

  // Picks an index into `backends` (same size/order as the last Rebuild; counters and
  // availability may have changed since) or std::nullopt when no backend can take new work.
  // Never returns a backend for which CanTakeNewWork() is false.
  virtual std::optional<size_t> Pick(std::span<const Backend> backends, const Flow& flow) = 0;
};

struct SchedulerOptions {
  uint32_t mh_table_size = 65537;  // Maglev table size M; must be prime (Maglev §3.4)
  double dwlc_reference_ms = 700;  // seed 003: w = reference - T, 0 when T >= reference
  uint64_t seed = 1;               // salts the hashes of mh; equal seeds give equal tables
  // dwlc: when every usable server has a derived weight of 0 (all at or over the reference),
  // schedule by configured weights instead of refusing all new work. Refusing would starve
  // the servers of the requests that refresh their response-time EWMA, so a saturated
  // cluster could never recover. false = the seed's letter: no server, no pick.
  bool dwlc_fallback_when_saturated = true;
  // Persistence in front of any scheduler (PersistenceOptions::expire_quiescent): LVS sysctl
  // expire_quiescent_template; false = a known client still goes to its server at weight 0.
  bool expire_quiescent_template = false;
};

// Makes the scheduler called `name` (one of SchedulerNames()). InvalidArgument for an unknown
// name (the message lists the valid ones) or for bad options (mh_table_size not a prime in
// [7, 16777216], dwlc_reference_ms not positive and finite).
Result<std::unique_ptr<Scheduler>> MakeScheduler(std::string_view name,
                                                 const SchedulerOptions& options = {});

// The table the scheduler called `name` derives from `backends` (nullptr for those that use
// none); the same errors as MakeScheduler.
Result<std::shared_ptr<const SchedTable>> BuildSchedTable(std::string_view name,
                                                          const SchedulerOptions& options,
                                                          std::span<const Backend> backends);

// "rr", "wrr", "sh", "lc", "wlc", "sed", "nq", "ll", "mh", "dwlc", in that order.
std::span<const std::string_view> SchedulerNames();

}  // namespace vsc::sched
