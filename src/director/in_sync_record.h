// The in-sync set kept in etcd (issue 11; Kafka's ISR rule): which replicas hold every write the
// active director acknowledged, so that a director promoted after it does not choose its log head
// from replicas that lack some of them.
//
// - The record: one key, /vscluster/<cluster>/in_sync, a JSON value {"epoch", "seq", "in_sync"}
//   written by the lease holder only (a transaction compared on its own sequencer key's
//   create_revision, in_sync_recorder.h), so a deposed director can no longer change it.
// - The rule (InSyncLedger, under commit policy `all`): every member of the set etcd holds has
//   every acknowledged write. A write is decided when every replica in sync at its seq acked it,
//   or left the set; so an answer is released only while the set etcd holds is within the
//   replicas in sync now. When a replica leaves, answers that relied on its leaving wait until
//   etcd holds the smaller set (a few ms). A replica joins the set in memory once caught up and is
//   recorded lazily: a larger record is never needed for safety, only for a later shrink.
// - Never recorded empty: with no replica in sync no write is acknowledged, and the last record
//   still names the replicas that hold the acknowledged ones.
// - A new epoch starts with the record it read at promotion (or none): until this director's own
//   set is in etcd, it releases nothing (the old set may name replicas that miss its writes).
// - Promotion (PromotionWaitsFor): a director resumes only once a member of the last record has
//   registered; the head it chooses then holds every acknowledged write.
//
// Pure: no I/O, no clock.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "common/status.h"

namespace vsc::director {

using ReplicaSet = std::set<std::string>;

struct InSyncRecord {
  uint64_t epoch = 0;  // the epoch of the director that wrote it
  uint64_t seq = 0;    // its last seq when it asked for the write (for operators)
  ReplicaSet members;
  bool operator==(const InSyncRecord&) const = default;
};

std::string EncodeInSyncRecord(const InSyncRecord& record);
// DataLoss naming what is wrong (not JSON, a field missing or of the wrong type, no member).
Result<InSyncRecord> ParseInSyncRecord(std::string_view value);
// "rs1, rs2" (for status lines and logs).
std::string JoinReplicaSet(const ReplicaSet& set);

// What a promotion waits for: nullopt when it may go on; else the members of the last record, of
// which none has registered yet.
std::optional<ReplicaSet> PromotionWaitsFor(const std::optional<InSyncRecord>& last,
                                            const ReplicaSet& registered);

// The active director's side of the rule, for one epoch.
class InSyncLedger {
 public:
  // A new epoch: `previous` is what etcd held when this director took the lease.
  void Reset(uint64_t epoch, std::optional<InSyncRecord> previous);
  // Answers may be released: etcd holds a set within `in_sync`.
  bool Covered(const ReplicaSet& in_sync) const;
  // The record to write now, or nullopt (the same set is written or being written, or the set is
  // empty). Marks it requested.
  std::optional<InSyncRecord> Want(const ReplicaSet& in_sync, uint64_t seq);
  // etcd took `record`; one for another epoch is ignored.
  void OnRecorded(const InSyncRecord& record);
  // The write was refused or failed: the next Want asks again.
  void OnRecordFailed(uint64_t epoch);

  uint64_t epoch() const { return epoch_; }
  // What etcd holds, as far as this director knows (the previous record until its own).
  const std::optional<InSyncRecord>& recorded() const { return recorded_; }
  bool own_recorded() const { return recorded_ && recorded_->epoch == epoch_; }

 private:
  uint64_t epoch_ = 0;
  std::optional<InSyncRecord> recorded_;
  std::optional<ReplicaSet> requested_;  // the set last asked for under epoch_
};

}  // namespace vsc::director

namespace vsc::director {

// Where the Replicator keeps the record (InSyncRecorder, on etcd; a fake in unit tests). Both
// calls return at once; the answers come back on the control thread, through
// Replicator::OnInSyncRead and Replicator::OnInSyncWritten.
class InSyncStore {
 public:
  virtual ~InSyncStore() = default;
  // Reads the record, for a promotion under `epoch`.
  virtual void Read(uint64_t epoch) = 0;
  // Writes `record` if its epoch's director still holds the sequencer key.
  virtual void Write(const InSyncRecord& record) = 0;
  // The key, for operators ("/vscluster/c/in_sync").
  virtual std::string Where() const = 0;
};

}  // namespace vsc::director
