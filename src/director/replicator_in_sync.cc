// The Replicator's in-sync record (issue 11; in_sync_record.h has the rule and why it keeps every
// acknowledged write across a failover): under a lease and commit policy `all`, the set of
// replicas in sync is written to etcd as it changes; an answer waits while etcd's set is not
// within the replicas in sync now; a promotion reads the last set and resumes only once one of
// its replicas has registered.
#include <spdlog/spdlog.h>

#include <algorithm>

#include "director/replicator.h"

namespace vsc::director {

namespace {

// How often a promotion waiting for a replica of the last record reads the record again (an
// operator may delete it to promote from the replicas present).
constexpr Duration kRecordReread = std::chrono::seconds(1);

}  // namespace

void Replicator::SetInSyncStore(InSyncStore* store) {
  if (!options_.require_lease || options_.policy != replication::CommitPolicy::kAll) return;
  in_sync_store_ = store;
}

void Replicator::RecordInSync() {
  if (!KeepsInSyncRecord() || NotSequencing()) return;
  if (auto record = in_sync_.Want(Participants(), sequencer_->last_seq())) {
    in_sync_store_->Write(*record);
  }
}

void Replicator::OnInSyncWritten(const InSyncRecord& record, const Status& status) {
  if (!KeepsInSyncRecord() || stopped_) return;
  if (!status.ok()) {
    in_sync_error_ = status.message();
    in_sync_.OnRecordFailed(record.epoch);  // the next tick asks again
    return;
  }
  in_sync_error_.clear();
  in_sync_.OnRecorded(record);
  const size_t held = held_;
  ReleaseHeldIfCovered();
  spdlog::info("in-sync record: etcd holds ({}) under epoch {} at seq {}; {} held answers released",
               JoinReplicaSet(record.members), record.epoch, record.seq, held - held_);
}

std::vector<std::pair<uint64_t, Replicator::Waiting>> Replicator::TakeHeld() {
  std::vector<std::pair<uint64_t, Waiting>> out;
  for (auto it = waiting_.begin(); held_ > out.size() && it != waiting_.end();) {
    if (!it->second.held) {
      ++it;
      continue;
    }
    out.emplace_back(it->first, std::move(it->second));
    it = waiting_.erase(it);
  }
  held_ = 0;
  return out;
}

void Replicator::ReleaseHeldIfCovered() {
  if (held_ == 0 || !in_sync_.Covered(Participants())) return;
  for (auto& [seq, w] : TakeHeld()) {
    proto::WriteResponse resp = std::move(*w.held);
    CountAnswer(resp);
    AnswerWaiting(seq, w, std::move(resp));
  }
}

void Replicator::AnswerHeldUnknown(uint64_t seq, Waiting& w) {
  proto::WriteResponse resp = std::move(*w.held);
  w.held.reset();
  resp.set_ok(false);
  resp.set_code(kWriteUnknown);
  resp.set_duplicate(false);
  resp.set_seq(seq);
  resp.set_error("outcome unknown: seq " + std::to_string(seq) +
                 " was applied by every replica in sync, but this director stopped sequencing "
                 "under epoch " +
                 std::to_string(in_sync_.epoch()) +
                 " before etcd recorded the in-sync set that answer relied on");
  AnswerWaiting(seq, w, std::move(resp));
}

void Replicator::FailHeld() {
  for (auto& [seq, w] : TakeHeld()) AnswerHeldUnknown(seq, w);
}

void Replicator::OnInSyncRead(uint64_t epoch, Result<std::optional<InSyncRecord>> record) {
  if (!KeepsInSyncRecord() || stopped_ || !promoting_ || epoch != sequencer_->epoch()) return;
  if (!record.ok()) {
    in_sync_error_ = record.status().message();
    if (promotion_read_ == RecordRead::kReading) promotion_read_ = RecordRead::kNone;
    promotion_outcome_ = "reading the last in-sync set from etcd: " + in_sync_error_;
    return;
  }
  in_sync_error_.clear();
  promotion_record_ = std::move(record).value();
  promotion_read_ = RecordRead::kRead;
  MaybeFinishPromotion();
}

bool Replicator::PromotionMayUseRecord(const ReplicaSet& registered) {
  if (!KeepsInSyncRecord()) return true;
  const TimePoint now = clock_.Now();
  const uint64_t epoch = sequencer_->epoch();
  if (promotion_read_ == RecordRead::kNone) {  // not asked yet, or the last read failed
    promotion_read_ = RecordRead::kReading;
    promotion_read_at_ = now;
    in_sync_store_->Read(epoch);
  }
  if (promotion_read_ != RecordRead::kRead) {
    if (in_sync_error_.empty()) promotion_outcome_ = "reading the last in-sync set from etcd";
    return false;
  }
  const std::optional<ReplicaSet> waits = PromotionWaitsFor(promotion_record_, registered);
  if (!waits) {
    in_sync_.Reset(epoch, promotion_record_);
    promotion_outcome_.clear();
    return true;
  }
  promotion_outcome_ =
      "waiting for a replica of the last in-sync set (" + JoinReplicaSet(*waits) +
      "), recorded under epoch " + std::to_string(promotion_record_->epoch) + " at seq " +
      std::to_string(promotion_record_->seq) + ": only they hold every acknowledged write; if " +
      "none of them can return, delete " + in_sync_store_->Where() +
      " in etcd to promote from the replicas present (writes only they held are lost)";
  if (now - promotion_read_at_ >= kRecordReread) {
    promotion_read_at_ = now;
    in_sync_store_->Read(epoch);  // promotion_read_ stays kRead: the record stands until then
  }
  return false;
}

bool Replicator::WholeRecordRegistered(const ReplicaSet& registered) const {
  if (!KeepsInSyncRecord() || promotion_read_ != RecordRead::kRead || !promotion_record_) {
    return false;
  }
  const ReplicaSet& members = promotion_record_->members;
  return std::includes(registered.begin(), registered.end(), members.begin(), members.end());
}

}  // namespace vsc::director
