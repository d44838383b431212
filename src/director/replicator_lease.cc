// The Replicator under an etcd sequencer lease (issue 11): what stops sequencing, the adoption
// of a new lease's epoch, and a replica's refusal of a deposed director's stream.
#include <spdlog/spdlog.h>

#include "director/replicator.h"

namespace vsc::director {

std::optional<std::string> Replicator::NotSequencing() const {
  if (!options_.require_lease) return std::nullopt;
  if (!lease_.held) return lease_.refusal;
  // The keeper thread may be stuck in an etcd call: the deadline holds by our own clock.
  if (clock_.Now() >= lease_.valid_until) {
    return "no quorum for the sequencer lease (no keepalive answered within the TTL)";
  }
  if (!adopt_error_.empty()) return "the sequencer lease's epoch was refused: " + adopt_error_;
  if (promoting_) {
    return "promoting: learning where every replica stands before sequencing under epoch " +
           std::to_string(sequencer_->epoch()) +
           (promotion_outcome_.empty() ? "" : " (" + promotion_outcome_ + ")");
  }
  if (fenced_epoch_ >= sequencer_->epoch()) {
    return "another director holds the sequencer lease (a replica follows epoch " +
           std::to_string(fenced_epoch_) + ", newer than ours, " +
           std::to_string(sequencer_->epoch()) + ")";
  }
  return std::nullopt;
}

void Replicator::SetLease(const LeaseView& view) {
  if (!options_.require_lease || stopped_) return;
  const bool was = !NotSequencing().has_value();
  lease_ = view;
  // Held answers relied on a set etcd may now never take from this director.
  if (!view.held) FailHeld();
  if (view.held && view.epoch == sequencer_->epoch()) adopt_error_.clear();
  if (view.held && view.epoch != sequencer_->epoch()) {
    if (Status s = log_->AdoptEpoch(view.epoch); !s.ok()) {
      if (adopt_error_ != s.message()) spdlog::error("sequencer lease: {}", s.ToString());
      adopt_error_ = s.message();
    } else {
      adopt_error_.clear();
      sequencer_ = std::make_unique<replication::Sequencer>(view.epoch, sequencer_->last_seq(),
                                                            sequencer_->last_ts_micros());
      spdlog::info("replication: epoch {} adopted at seq {}", view.epoch, sequencer_->last_seq());
      StartPromotion();
    }
  }
  const bool now = !NotSequencing().has_value();
  if (now && !was) PlaceHeldReplicas();  // which also orders snapshots and pumps every stream
}

std::optional<std::string> Replicator::StandbyFor() const {
  if (!options_.require_lease || lease_.held || lease_.holder.empty()) return std::nullopt;
  return lease_.holder;
}

void Replicator::OnFenced(Replica& r, uint64_t epoch) {
  counters_.fenced_acks.Add();
  fenced_epoch_ = std::max(fenced_epoch_, epoch);
  r.state = ReplicationState::kFenced;
  r.reason = "refused our stream: it follows epoch " + std::to_string(epoch) + ", ours is " +
             std::to_string(sequencer_->epoch());
  r.window.Reset();
  r.in_flight.clear();
  r.tracked_from = UINT64_MAX;
  spdlog::error("replica {} {}; this director stops sequencing", r.id, r.reason);
  Decide(tracker_.Forget(r.id));
  Notify(progress_);
}

}  // namespace vsc::director
