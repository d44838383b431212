// ApplyPacer: when the replica thread may start its next transaction (one Applier::Apply).
//
// Why: a replica transaction costs the same fixed work however few entries it holds — the
// replica-state row and its WAL frame, the commit's locks, one ack through the io thread (two
// wakeups), and a page-cache reset on every lookup reader. Under a steady light flow (the seed's
// 1,000 updates/s, arriving a couple of entries per message) that fixed part is most of the cost,
// and it is paid on every replica. Grouping the entries of a few milliseconds into one
// transaction pays it once per group (docs/benchmarks.md "Mixed load").
//
// Rule: a transaction may start no sooner than `min_interval` after the previous one started.
// Entries that reach an idle replica (the previous start is older than that) are applied at once,
// so a lone write waits for nothing; entries that arrive in between wait at most `min_interval`.
// A full batch (`max_batch` entries queued) starts at once: waiting would not make it larger.
// With min_interval 0 every batch starts as soon as the thread is free (the old behaviour).
//
// Pure: no clock, no thread; the caller passes the times. Owned by the replica thread.
#pragma once

#include <cstddef>

#include "common/clock.h"

namespace vsc::realserver {

class ApplyPacer {
 public:
  ApplyPacer(Duration min_interval, size_t max_batch)
      : min_interval_(min_interval), max_batch_(max_batch) {}

  // How long the next transaction must still wait at `now` with `queued_entries` queued (> 0);
  // zero: start it now.
  Duration Delay(TimePoint now, size_t queued_entries) const;
  // A transaction started at `now`.
  void Started(TimePoint now) {
    last_start_ = now;
    started_ = true;
  }
  Duration min_interval() const { return min_interval_; }

 private:
  Duration min_interval_;
  size_t max_batch_;
  bool started_ = false;
  TimePoint last_start_{};
};

}  // namespace vsc::realserver
