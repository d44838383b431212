// Sequencer: gives each accepted write its (epoch, seq) and timestamp. Pure: the caller passes
// the wall clock; timestamps never go backwards even if the wall clock does, so 'now' on the
// replicas is monotonic in seq. Thread: one owner.
#pragma once

#include <cstdint>
#include <vector>

#include "replication/entry.h"

namespace vsc::replication {

class Sequencer {
 public:
  // Resumes after `last_seq` (0 for a new log) with the last timestamp used.
  Sequencer(uint64_t epoch, uint64_t last_seq, int64_t last_ts_micros)
      : epoch_(epoch), last_seq_(last_seq), last_ts_(last_ts_micros) {}

  // The next entry: seq = last_seq() + 1, ts = max(now_micros, previous ts + 1) (strictly
  // increasing even when the wall clock steps back).
  Entry Assign(std::vector<Statement> statements, Entry::Kind kind, int64_t now_micros);

  uint64_t epoch() const { return epoch_; }
  uint64_t last_seq() const { return last_seq_; }
  int64_t last_ts_micros() const { return last_ts_; }

 private:
  uint64_t epoch_;
  uint64_t last_seq_;
  int64_t last_ts_;
};

}  // namespace vsc::replication
