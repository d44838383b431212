#include "testing/fake_executor.h"

#include <cstdio>
#include <utility>

namespace vsc::testing {

Result<replication::ReplicaState> FakeExecutor::LoadState() {
  calls_.push_back("load");
  if (std::exchange(fail_load_, false)) return IoError("fake: cannot read the state");
  return disk_->state;
}

Status FakeExecutor::Begin() {
  calls_.push_back("begin");
  if (std::exchange(fail_begin_, false)) return IoError("fake: cannot begin");
  if (in_txn_) return Internal("fake: Begin inside a transaction");
  in_txn_ = true;
  pending_.clear();
  return Status::Ok();
}

Result<replication::EntryResult> FakeExecutor::Execute(const replication::Entry& entry) {
  calls_.push_back("execute " + std::to_string(entry.seq));
  if (!in_txn_) return Internal("fake: Execute outside a transaction");
  if (fail_execute_at_ != 0 && entry.seq == fail_execute_at_) {
    fail_execute_at_ = 0;
    return IoError("fake: disk I/O error at seq " + std::to_string(entry.seq));
  }
  replication::EntryResult r;
  r.seq = entry.seq;
  if (entry.kind == replication::Entry::Kind::kChecksum) {
    char hex[32];
    std::snprintf(hex, sizeof hex, "%zx", disk_->applied.size() + pending_.size());
    r.checksum = hex;
    return r;
  }
  for (const auto& s : entry.statements) {
    if (s.sql.rfind("FAIL", 0) == 0) {
      r.code = 19;
      r.error = "constraint failed";
      return r;
    }
  }
  r.rows_changed = static_cast<int64_t>(entry.statements.size());
  pending_.push_back(entry.seq);
  return r;
}

Status FakeExecutor::Commit(const replication::ReplicaState& state) {
  calls_.push_back("commit " + std::to_string(state.applied_seq));
  if (!in_txn_) return Internal("fake: Commit outside a transaction");
  if (std::exchange(crash_before_commit_, false)) {
    in_txn_ = false;
    pending_.clear();
    return IoError("fake: crashed before the commit reached the disk");
  }
  disk_->state = state;
  disk_->applied.insert(disk_->applied.end(), pending_.begin(), pending_.end());
  ++disk_->commits;
  in_txn_ = false;
  pending_.clear();
  if (std::exchange(crash_after_commit_, false)) {
    return IoError("fake: crashed after the commit reached the disk");
  }
  return Status::Ok();
}

void FakeExecutor::Rollback() {
  calls_.push_back("rollback");
  in_txn_ = false;
  pending_.clear();
}

}  // namespace vsc::testing
