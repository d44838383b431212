#include "director/sequencer_lease.h"

#include <algorithm>

namespace vsc::director {

SequencerLease::SequencerLease(Duration ttl, std::string identity)
    : ttl_(ttl), period_(ttl / 3), identity_(std::move(identity)) {}

int64_t SequencerLease::ttl_seconds() const {
  const int64_t ms = static_cast<int64_t>(ToMillis(ttl_));
  return std::max<int64_t>(1, (ms + 999) / 1000);
}

void SequencerLease::Lose(const std::string& why) {
  if (holding_) lost_ = why;
  holding_ = false;
  if (lease_id_ != 0) revoke_id_ = lease_id_;
  lease_id_ = 0;
}

void SequencerLease::Tick(TimePoint now) {
  if (lease_id_ != 0 && now >= alive_until_) {
    Lose("no keepalive answered within the TTL of " +
         std::to_string(static_cast<int64_t>(ToMillis(granted_ttl_))) + " ms");
    grant_at_ = now;
  }
}

LeaseAction SequencerLease::Next(TimePoint now) const {
  using K = LeaseAction::Kind;
  if (revoke_id_ != 0) return {K::kRevoke, revoke_id_, now};
  if (lease_id_ == 0) {
    if (now >= grant_at_) return {K::kGrant, 0, now};
    return {K::kWait, 0, grant_at_};
  }
  if (!holding_ && now >= acquire_at_) return {K::kAcquire, lease_id_, now};
  if (now >= keepalive_at_) return {K::kKeepAlive, lease_id_, now};
  TimePoint wake = std::min(keepalive_at_, alive_until_);
  if (!holding_) wake = std::min(wake, acquire_at_);
  return {K::kWait, 0, wake};
}

void SequencerLease::OnRevoked() { revoke_id_ = 0; }

void SequencerLease::OnGranted(const etcd::Lease& lease, TimePoint sent) {
  lease_id_ = lease.id;
  granted_ttl_ = std::min<Duration>(ttl_, std::chrono::seconds(lease.ttl_s));
  alive_until_ = sent + granted_ttl_;
  keepalive_at_ = sent + period_;
  acquire_at_ = sent;
  etcd_error_.clear();
}

void SequencerLease::OnAcquire(const etcd::TxnResult& txn, TimePoint sent) {
  etcd_error_.clear();
  // Ours when the transaction created it, or when an earlier claim that timed out did (the key
  // names our lease).
  if (txn.kv && (txn.succeeded || txn.kv->lease == lease_id_)) {
    holding_ = true;
    epoch_ = kEtcdEpochBase + static_cast<uint64_t>(txn.kv->create_revision);
    holder_.clear();
    lost_.clear();
    return;
  }
  holding_ = false;
  if (txn.kv && !identity_.empty() && txn.kv->value == identity_) {
    // Our key under the lease we lost (etcd kept it: no quorum to expire it): revoke, reclaim.
    revoke_id_ = txn.kv->lease;
    acquire_at_ = sent;
    holder_.clear();
    return;
  }
  holder_revision_ = txn.kv ? txn.kv->mod_revision : 0;
  holder_ = !txn.kv                 ? std::string()
            : txn.kv->value.empty() ? "lease " + std::to_string(txn.kv->lease)
                                    : txn.kv->value;
  acquire_at_ = sent + period_;
}

void SequencerLease::OnKeepAlive(int64_t ttl_s, TimePoint sent) {
  etcd_error_.clear();
  alive_until_ =
      std::max(alive_until_, sent + std::min<Duration>(granted_ttl_, std::chrono::seconds(ttl_s)));
  keepalive_at_ = sent + period_;
}

void SequencerLease::OnError(LeaseAction::Kind call, const Status& error, TimePoint now) {
  using K = LeaseAction::Kind;
  if (call == K::kRevoke) {
    revoke_id_ = 0;  // it expires in etcd by itself
    return;
  }
  if (error.code() == Code::kNotFound && call != K::kGrant) {
    Lose("etcd no longer knows the lease (" + error.message() + ")");
    grant_at_ = now;
    return;
  }
  etcd_error_ = error.message();
  switch (call) {
    case K::kGrant:
      grant_at_ = now + period_;
      break;
    case K::kAcquire:
      acquire_at_ = now + period_;
      break;
    default:
      keepalive_at_ = now + period_ / 2;
      break;
  }
}

std::optional<int64_t> SequencerLease::WatchFrom() const {
  if (lease_id_ == 0 || holding_ || revoke_id_ != 0 || holder_.empty() || holder_revision_ <= 0 ||
      !etcd_error_.empty()) {
    return std::nullopt;
  }
  return holder_revision_ + 1;
}

void SequencerLease::OnHolderGone(TimePoint now) {
  holder_revision_ = 0;  // watched again only after the next claim has looked
  acquire_at_ = now;
}

LeaseView SequencerLease::View(TimePoint now) const {
  LeaseView v;
  v.epoch = epoch_;
  if (holding_ && lease_id_ != 0 && now < alive_until_) {
    v.held = true;
    v.valid_until = alive_until_;
    return v;
  }
  if (!holding_ && etcd_error_.empty()) v.holder = holder_;  // as etcd last told it
  if (!etcd_error_.empty()) {
    v.refusal = "no quorum for the sequencer lease (" + etcd_error_ + ")";
  } else if (!holder_.empty() && !holding_) {
    v.refusal = "another director holds the sequencer lease (" + holder_ + ")";
  } else if (!lost_.empty()) {
    v.refusal = "the sequencer lease was lost: " + lost_ + "; claiming it again";
  } else {
    v.refusal = "the sequencer lease is not held yet; claiming it";
  }
  return v;
}

}  // namespace vsc::director
