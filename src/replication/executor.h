// Executor: how the Applier touches a database, so that tests can inject faults (a crash before
// or after commit) with a recording fake (src/testing) and production uses SQLite
// (SqliteExecutor, replica_store.h). All calls on one thread.
#pragma once

#include <cstdint>

#include "common/status.h"
#include "replication/entry.h"

namespace vsc::replication {

struct ReplicaState {
  uint64_t epoch = 0;  // epoch of the last applied entry
  uint64_t applied_seq = 0;
  Digest digest{};
  // The newest epoch a director sent under (Replicate.epoch): messages from older epochs are
  // refused (issue 11). Stored with applied_seq, in the same transaction.
  uint64_t fence_epoch = 0;
};

class Executor {
 public:
  virtual ~Executor() = default;
  // The state as durably stored (applied_seq and digest live in the database itself).
  virtual Result<ReplicaState> LoadState() = 0;
  virtual Status Begin() = 0;
  // Runs one entry inside the open transaction, as a unit: on failure its own changes are rolled
  // back (savepoint) and the failure is the result, not an error. An error Status means the
  // executor itself failed (I/O, corruption): the whole transaction must be abandoned.
  virtual Result<EntryResult> Execute(const Entry& entry) = 0;
  // Stores `state` in the same transaction and commits.
  virtual Status Commit(const ReplicaState& state) = 0;
  virtual void Rollback() = 0;
};

}  // namespace vsc::replication
