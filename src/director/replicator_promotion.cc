// The Replicator's promotion (issue 11): a director that has just taken the sequencer lease
// learns where every replica stands before it sequences anything, takes the highest position as
// its log head (promotion.h says why no acknowledged write is lost that way), rebases its own log
// on it when that log does not hold the head's history, and places every replica against the
// new head: in sync, catching up from the log, or copying a snapshot from a replica at the head.
#include <spdlog/spdlog.h>

#include "director/promotion.h"
#include "director/replicator.h"
#include "replication/digest.h"

namespace vsc::director {

using replication::Digest;

namespace {

// A replica whose position counts for the head: registered with this director, and neither
// fenced (it follows another director: its position is not known until it registers again) nor
// waiting for a snapshot.
bool Candidate(ReplicationState state) {
  return state == ReplicationState::kInSync || state == ReplicationState::kCatchingUp ||
         state == ReplicationState::kAwaitingHead;
}

}  // namespace

void Replicator::StartPromotion() {
  // Replicas streaming from this log stay as they are (their history is this log's) until the
  // head is chosen; nothing new is sequenced or sent meanwhile (NotSequencing).
  promoting_ = true;
  promotion_until_ = clock_.Now() + options_.promotion_wait;
  // Answers held under the previous epoch relied on a set etcd never took from it.
  FailHeld();
  promotion_record_.reset();
  promotion_read_ = RecordRead::kNone;
  spdlog::info("replication: promotion under epoch {}: waiting {} ms for the replicas' positions",
               sequencer_->epoch(), ToMillis(options_.promotion_wait));
  MaybeFinishPromotion();
}

void Replicator::MaybeFinishPromotion() {
  if (!promoting_) return;
  ReplicaSet registered;
  for (const auto& [id, r] : replicas_) {
    if (r.link && Candidate(r.state)) registered.insert(id);
  }
  // The last in-sync set is read from the start of the window (replicator_in_sync.cc).
  if (!PromotionMayUseRecord(registered)) return;
  if (registered.empty()) return;
  // Every replica of the last in-sync set is here: they hold every acknowledged write, so
  // waiting longer could only spare a later one a snapshot.
  if (clock_.Now() < promotion_until_ && !WholeRecordRegistered(registered)) return;
  FinishPromotion();
}

void Replicator::FinishPromotion() {
  std::vector<HeadCandidate> candidates;
  for (const auto& [id, r] : replicas_) {
    if (!r.link || !Candidate(r.state)) continue;
    candidates.push_back(HeadCandidate{id, r.acked_seq, r.digest, !r.schema.empty()});
  }
  std::optional<HeadChoice> head = PickHead(candidates);
  if (!head) return;
  const uint64_t log_last = sequencer_->last_seq();
  std::optional<Digest> agreed;
  if (head->seq > 0 && head->seq <= log_last) agreed = AgreedAt(head->seq);
  HeadChoice choice = DecideRebase(*head, log_last, agreed);
  if (choice.rebase) {
    const std::vector<std::string>& ddl = replicas_.at(choice.source).schema;
    if (ddl.empty()) {
      spdlog::error("promotion: the head replica {} sent no schema; waiting for one that does",
                    choice.source);
      return;
    }
    auto mirror = replication::SchemaMirror::Create();
    Status s = mirror.ok() ? (*mirror)->LoadSchema(ddl) : mirror.status();
    if (s.ok()) s = log_->Rebase(choice.seq, choice.digest, ddl);
    if (!s.ok()) {
      spdlog::error("promotion: rebasing the log on seq {}: {}", choice.seq, s.ToString());
      promotion_outcome_ = "rebasing the log failed: " + s.message();
      return;  // still promoting: writes stay refused, the next tick tries again
    }
    mirror_ = std::move(mirror).value();
    // An entry beyond the head was applied by no replica, and none will apply it; one at or
    // below it may or may not be what the replicas applied at its seq.
    FailWaiting([head = choice.seq](uint64_t seq) {
      const std::string n = std::to_string(seq);
      if (seq > head) {
        return std::pair{kWriteUnavailable,
                         "unavailable: seq " + n +
                             " was applied by no replica when this director took the sequencer "
                             "lease again; the write was not applied"};
      }
      return std::pair{kWriteUnknown, "outcome unknown: the replicas passed seq " + n +
                                          " under a history this director's log does not hold"};
    });
    tracker_ = replication::CommitTracker(options_.policy);
    ResumeAfter(sequencer_->epoch(), choice.seq, sequencer_->last_ts_micros());
    digests_ = DigestFollower();
    if (choice.seq > 0) digests_.RecordAgreed(choice.seq, choice.digest);
    agreed_persisted_ = choice.seq;
    for (auto& [id, r] : replicas_) {
      if (!r.link || !Candidate(r.state)) continue;
      // What it was streamed came from the dropped log: it is placed against the new head.
      r.window.Reset();
      r.in_flight.clear();
      r.tracked_from = UINT64_MAX;
      r.state = ReplicationState::kAwaitingHead;
    }
  }
  promoting_ = false;
  promotion_outcome_ = choice.reason;
  spdlog::info("replication: promotion done under epoch {}: {}", sequencer_->epoch(),
               choice.reason);
  PlaceHeldReplicas();
  RecordInSync();  // nothing is answered under this epoch before etcd has its set
}

void Replicator::PlaceHeldReplicas() {
  for (auto& [id, r] : replicas_) {
    if (!r.link || r.state != ReplicationState::kAwaitingHead) continue;
    ReplicaPosition pos;
    pos.applied_seq = r.acked_seq;
    pos.digest = r.digest;
    pos.content_checksum = r.content_checksum;
    ApplyPlan(r, PlanFor(pos), r.failed_snapshot_peer);
  }
  SendSnapshotOrders();
  PumpAll();
}

}  // namespace vsc::director
