#include "replication/sequencer.h"

#include <algorithm>

namespace vsc::replication {

Entry Sequencer::Assign(std::vector<Statement> statements, Entry::Kind kind, int64_t now_micros) {
  Entry e;
  e.epoch = epoch_;
  e.seq = ++last_seq_;
  // Strictly increasing: a wall clock stepped back (NTP) must not make 'now' on the replicas go
  // backwards, and distinct entries get distinct instants.
  last_ts_ = std::max(now_micros, last_ts_ + 1);
  e.ts_micros = last_ts_;
  e.kind = kind;
  e.statements = std::move(statements);
  return e;
}

}  // namespace vsc::replication
