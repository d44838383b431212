// FakeExecutor: a recording, fault-injecting Executor for Applier tests (no SQLite).
//
// Its "disk" (FakeDisk) is shared so that a test can drop an executor mid-batch and build a new
// one on the same disk, which is what a process crash and restart look like to the Applier.
// Semantics of an entry: a write whose statements all succeed changes `rows_changed = number of
// statements` and is recorded in the disk's `applied` list at commit; a statement whose SQL starts
// with "FAIL" makes the entry fail alone (code 19, SQLITE_CONSTRAINT; nothing recorded); a
// checksum marker returns the hex count of the entries applied before it.
// Faults: an executor error at a given seq, a failing Begin or LoadState, and a crash before or
// after the commit reaches the disk (Commit returns IoError either way).
// Thread: the test thread only.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "replication/executor.h"

namespace vsc::testing {

struct FakeDisk {
  replication::ReplicaState state;
  std::vector<uint64_t> applied;  // seqs whose effects were committed, in commit order
  uint64_t commits = 0;
};

class FakeExecutor : public replication::Executor {
 public:
  explicit FakeExecutor(std::shared_ptr<FakeDisk> disk) : disk_(std::move(disk)) {}

  // Faults, each used once.
  void FailExecuteAt(uint64_t seq) { fail_execute_at_ = seq; }
  void FailBegin() { fail_begin_ = true; }
  void FailLoadState() { fail_load_ = true; }
  void CrashBeforeCommit() { crash_before_commit_ = true; }
  void CrashAfterCommit() { crash_after_commit_ = true; }

  // Every call in order: "load", "begin", "execute <seq>", "commit <applied_seq>", "rollback".
  const std::vector<std::string>& calls() const { return calls_; }
  bool in_transaction() const { return in_txn_; }

  Result<replication::ReplicaState> LoadState() override;
  Status Begin() override;
  Result<replication::EntryResult> Execute(const replication::Entry& entry) override;
  Status Commit(const replication::ReplicaState& state) override;
  void Rollback() override;

 private:
  std::shared_ptr<FakeDisk> disk_;
  std::vector<std::string> calls_;
  std::vector<uint64_t> pending_;  // applied in the open transaction
  bool in_txn_ = false;
  uint64_t fail_execute_at_ = 0;
  bool fail_begin_ = false;
  bool fail_load_ = false;
  bool crash_before_commit_ = false;
  bool crash_after_commit_ = false;
};

}  // namespace vsc::testing
