// The Replicator's side of a replica's life: its admission at Register, its link attached and
// detached, its acks (progress, digest checks, the commit decisions they allow). replicator.cc
// holds the rest of the class.
#include <spdlog/spdlog.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "director/replication_wire.h"
#include "director/replicator.h"
#include "replication/digest.h"

namespace vsc::director {

using replication::Digest;
using replication::Entry;
using replication::EntryResult;

namespace {

// A digest as the wire carries it; nullopt when absent or not 32 bytes.
std::optional<Digest> ToDigest(const std::string& bytes) {
  Result<Digest> d = replication::DigestFromBytes(bytes);
  if (!d.ok()) return std::nullopt;
  return d.value();
}

bool HasCapability(const proto::Register& reg, std::string_view cap) {
  for (const auto& c : reg.capabilities()) {
    if (c == cap) return true;
  }
  return false;
}

const proto::Endpoint* FindEndpoint(const proto::Register& reg, std::string_view service) {
  for (const auto& e : reg.endpoints()) {
    if (e.service() == service) return &e;
  }
  return nullptr;
}

// The endpoint's address, IPv4 or IPv6 ("::1", as a replica listening there names it, or
// "[::1]"); port 0 when absent, unspecified or not an address literal (names are not resolved:
// this runs on the control thread).
net::SockAddr EndpointAddress(const proto::Endpoint* e) {
  if (e == nullptr || e->port() == 0 || e->port() > 65535) return {};
  std::string_view host = e->host();
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  asio::error_code ec;
  const asio::ip::address a = asio::ip::make_address(std::string(host), ec);
  if (ec || a.is_unspecified()) return {};
  return net::ToSockAddr({a, static_cast<uint16_t>(e->port())});
}

}  // namespace

CatchUpPlan Replicator::PlanFor(const ReplicaPosition& pos) const {
  LogPosition lp;
  lp.first_seq = log_->first_seq();
  lp.last_seq = sequencer_->last_seq();
  lp.bootstrap_checksum = log_->BootstrapChecksum();
  std::optional<Digest> agreed;
  if (pos.applied_seq > 0 && pos.applied_seq <= lp.last_seq) agreed = AgreedAt(pos.applied_seq);
  return DecideCatchUp(pos, lp, agreed);
}

Admission Replicator::Admit(const proto::Register& reg) const {
  Admission a;
  if (!HasCapability(reg, "sql")) return a;
  a.replica = true;
  // Under a lease, while not sequencing (no lease yet, lost, or promoting), its position cannot
  // be judged against a log another director may have overtaken: the plan waits (Attach holds
  // the replica; PlaceHeldReplicas places it). It serves lookups meanwhile.
  if (HoldsRegistrations()) return a;
  ReplicaPosition pos;
  pos.applied_seq = reg.applied_seq();
  pos.digest = ToDigest(reg.digest());
  if (pos.applied_seq == 0 && !pos.digest) pos.digest = replication::ZeroDigest();
  pos.content_checksum = reg.content_checksum();
  a.plan = PlanFor(pos);
  return a;
}

void Replicator::Attach(const proto::Register& reg, const Admission& admission,
                        std::shared_ptr<ReplicaLink> link) {
  if (!admission.replica || stopped_) return;
  auto [it, inserted] = replicas_.try_emplace(reg.id(), options_.window);
  Replica& r = it->second;
  if (!inserted && r.state != ReplicationState::kDown) {
    // A new session replaces the old one: whatever was in flight there is lost.
    Decide(tracker_.Forget(reg.id()));
  }
  r.id = reg.id();
  r.link = std::move(link);
  r.window.Reset();
  r.in_flight.clear();
  r.acked_seq = reg.applied_seq();
  r.digest = ToDigest(reg.digest()).value_or(replication::ZeroDigest());
  r.chain = r.digest;
  r.chain_seq = r.acked_seq;
  const std::string ordered_from = r.snapshot_sent ? r.snapshot_peer : "";
  r.snapshot_sent = false;
  r.snapshot_peer.clear();
  r.tracked_from = UINT64_MAX;
  r.has_sql = false;
  r.http_port = 0;
  if (const auto* http = FindEndpoint(reg, "http")) {
    r.http_host = http->host();
    r.http_port = static_cast<uint16_t>(http->port());
  }
  r.sql_tcp = EndpointAddress(FindEndpoint(reg, "sql-tcp"));
  r.schema.assign(reg.schema().begin(), reg.schema().end());
  r.content_checksum = reg.content_checksum();
  r.sql = EndpointAddress(FindEndpoint(reg, "sql-udp"));
  r.has_sql = r.sql.port() != 0;
  if (HoldsRegistrations()) {
    r.failed_snapshot_peer = ordered_from;
    r.state = ReplicationState::kAwaitingHead;
    r.reason = "registered at seq " + std::to_string(r.acked_seq) +
               " while this director does not sequence: placed when it does (" +
               NotSequencing().value_or("") + ")";
    spdlog::info("replica {} at seq {} held until this director sequences", r.id, r.acked_seq);
    MaybeFinishPromotion();
    return;
  }
  ApplyPlan(r, admission.plan, ordered_from);
}

void Replicator::ApplyPlan(Replica& r, const CatchUpPlan& plan, const std::string& ordered_from) {
  if (plan.action == CatchUpPlan::Action::kSnapshot) {
    r.failed_snapshot_peer = ordered_from;
    spdlog::warn("replica {} must copy a snapshot: {}{}", r.id, plan.reason,
                 ordered_from.empty() ? "" : " (the copy from " + ordered_from + " failed)");
    OrderSnapshot(r, ReplicationState::kNeedsSnapshot, plan.reason);
    return;
  }
  r.failed_snapshot_peer.clear();
  r.next_seq = plan.from_seq;
  if (plan.needs_catch_up) {
    // Out of service until caught up (a registration that needed it is CATCHING_UP already; a
    // replica held while this director did not sequence is placed here).
    if (plane_.BeginCatchUp(r.id, "replication: behind the log's head", clock_.Now()).ok()) {
      Notify(membership_changed_);
    }
    r.state = ReplicationState::kCatchingUp;
    r.reason = "replaying seq " + std::to_string(plan.from_seq) + ".." +
               std::to_string(last_seq()) + " from the log";
    spdlog::info("replica {} at seq {} catches up to {}", r.id, r.acked_seq, last_seq());
  } else {
    r.state = ReplicationState::kInSync;
    r.reason = "at the head";
    r.tracked_from = last_seq() + 1;
    spdlog::info("replica {} in sync at seq {}", r.id, r.acked_seq);
    SendSnapshotOrders();  // it may be the healthy peer someone was waiting for
  }
  Pump(r);
  Notify(progress_);
}

void Replicator::Detach(const std::string& id, const ReplicaLink* link) {
  auto it = replicas_.find(id);
  if (it == replicas_.end() || it->second.link.get() != link) return;
  Replica& r = it->second;
  r.link.reset();
  r.state = ReplicationState::kDown;
  r.reason = "control session closed";
  r.window.Reset();
  r.in_flight.clear();
  r.tracked_from = UINT64_MAX;
  verifies_.OnLost(id);
  Decide(tracker_.Forget(id));
  Notify(progress_);
}

// ---- acks ---------------------------------------------------------------------------------

void Replicator::OnAck(const std::string& id, const proto::ReplicaAck& ack) {
  auto it = replicas_.find(id);
  if (it == replicas_.end()) return;
  Replica& r = it->second;
  if (!r.link ||
      (r.state != ReplicationState::kInSync && r.state != ReplicationState::kCatchingUp)) {
    return;  // a late ack from a stream that was stopped
  }
  counters_.acks.Add();
  r.acks++;
  if (ack.fence_epoch() > sequencer_->epoch()) {
    OnFenced(r, ack.fence_epoch());
    return;
  }
  if (!ack.error().empty()) {
    OrderSnapshot(r, ReplicationState::kNeedsSnapshot,
                  "the replica could not apply at seq " + std::to_string(ack.applied_seq() + 1) +
                      ": " + ack.error());
    return;
  }
  const std::optional<Digest> reported = ToDigest(ack.digest());
  if (!reported) {
    OrderSnapshot(r, ReplicationState::kDiverged, "ack without a 32-byte digest");
    return;
  }
  std::vector<replication::Decision> decisions;
  for (const proto::EntryOutcome& o : ack.outcomes()) {
    const uint64_t seq = o.seq();
    if (seq <= r.acked_seq) continue;  // a duplicate the replica skipped
    while (!r.in_flight.empty() && r.in_flight.front()->entry.seq < seq) r.in_flight.pop_front();
    if (r.in_flight.empty() || r.in_flight.front()->entry.seq != seq) continue;  // never sent
    const Entry& entry = r.in_flight.front()->entry;
    EntryResult result = FromProto(o);
    if (entry.kind == Entry::Kind::kChecksum) {
      verifies_.OnChecksum(seq, id, o.checksum());
    }
    if (seq >= r.tracked_from && r.chain_seq + 1 == seq) {
      r.chain = digests_.Step(r.chain, entry, result);
      r.chain_seq = seq;
      for (auto& d : tracker_.OnAck(id, result, r.chain)) decisions.push_back(std::move(d));
    }
  }
  const uint64_t applied = ack.applied_seq();
  if (applied > r.acked_seq) {
    r.acked_seq = applied;
    r.digest = *reported;
  }
  r.window.OnAcked(applied);
  while (!r.in_flight.empty() && r.in_flight.front()->entry.seq <= applied) {
    r.in_flight.pop_front();
  }
  if (r.next_seq <= applied) r.next_seq = applied + 1;

  std::string divergence;
  if (r.state == ReplicationState::kInSync) {
    if (r.chain_seq < r.acked_seq && r.acked_seq >= r.tracked_from) {
      // Its commits could never be counted: the ack skipped outcomes it owed.
      divergence = "its ack reached seq " + std::to_string(r.acked_seq) +
                   " without outcomes after seq " + std::to_string(r.chain_seq);
    } else if (r.chain_seq == r.acked_seq && r.chain != r.digest) {
      divergence = "its digest at seq " + std::to_string(r.acked_seq) + " (" +
                   replication::DigestHex(r.digest) + ") is not the chain of its outcomes (" +
                   replication::DigestHex(r.chain) + ")";
    }
  } else {
    if (auto agreed = AgreedAt(r.acked_seq); agreed && *agreed != r.digest) {
      divergence = "its digest at seq " + std::to_string(r.acked_seq) +
                   " differs from the one the replicas agreed on";
    } else if (r.acked_seq >= last_seq()) {
      r.state = ReplicationState::kInSync;
      r.reason = "caught up";
      r.tracked_from = last_seq() + 1;
      r.chain = r.digest;
      r.chain_seq = r.acked_seq;
      spdlog::info("replica {} caught up at seq {}", r.id, r.acked_seq);
      plane_.CatchUpDone(r.id, clock_.Now());
      Notify(membership_changed_);
      SendSnapshotOrders();
    }
  }
  Decide(std::move(decisions));
  for (const replication::LateDivergence& late : tracker_.TakeLateDivergences()) {
    auto lr = replicas_.find(late.replica);
    if (lr == replicas_.end() || lr->second.state != ReplicationState::kInSync) continue;
    OrderSnapshot(lr->second, ReplicationState::kDiverged,
                  "its outcome or digest at seq " + std::to_string(late.seq) +
                      " differs from the one already decided");
  }
  if (!divergence.empty() &&
      (r.state == ReplicationState::kInSync || r.state == ReplicationState::kCatchingUp)) {
    OrderSnapshot(r, ReplicationState::kDiverged, divergence);
  }
  Pump(r);
  Notify(progress_);
}

namespace {

// The writer's answer to a decision (before the in-sync record may hold it).
proto::WriteResponse DecisionAnswer(const replication::Decision& d, uint64_t epoch) {
  proto::WriteResponse resp;
  resp.set_seq(d.seq);
  resp.set_epoch(epoch);
  resp.set_code(d.result.code);
  resp.set_rows_changed(d.result.rows_changed);
  AddStatementOutcomes(d.result, resp);
  if (d.unacknowledged) {
    resp.set_ok(false);
    resp.set_code(kWriteUnknown);
    resp.set_error("outcome unknown: every replica went down before acknowledging seq " +
                   std::to_string(d.seq) +
                   "; the write is in the log and is applied when a replica returns");
    return resp;
  }
  resp.set_ok(d.result.code == 0);
  if (d.result.code != 0) {
    resp.set_error("statement failed on the replicas and was rolled back everywhere: " +
                   d.result.error);
  }
  if (d.result.duplicate_of != 0) {
    // The key was applied before: the answer is that application's, at its seq.
    resp.set_duplicate(true);
    resp.set_seq(d.result.duplicate_of);
  }
  return resp;
}

}  // namespace

void Replicator::Decide(std::vector<replication::Decision> decisions) {
  if (decisions.empty()) return;
  ReleaseHeldIfCovered();  // a replica back in sync may cover etcd's set again
  // Whether etcd's in-sync set is within the replicas in sync (in_sync_record.h); asked once,
  // and again after a divergence below changed the set.
  enum class Cover { kUnknown, kYes, kNo } cover = Cover::kUnknown;
  for (replication::Decision& d : decisions) {
    committed_seq_ = std::max(committed_seq_, d.seq);
    if (!d.unacknowledged) digests_.RecordAgreed(d.seq, d.digest);
    verifies_.OnDecided(d.seq, d.result.checksum);
    if (auto w = waiting_.find(d.seq); w != waiting_.end()) {
      proto::WriteResponse resp = DecisionAnswer(d, sequencer_->epoch());
      if (KeepsInSyncRecord() && cover == Cover::kUnknown) {
        cover = in_sync_.Covered(Participants()) ? Cover::kYes : Cover::kNo;
      }
      if (cover == Cover::kNo) {
        w->second.held = std::move(resp);
        held_++;
        RecordInSync();
      } else {
        CountAnswer(resp);
        Waiting waiting = std::move(w->second);
        waiting_.erase(w);
        AnswerWaiting(d.seq, waiting, std::move(resp));
      }
    }
    for (const std::string& id : d.divergent) {
      auto it = replicas_.find(id);
      if (it == replicas_.end()) continue;
      Replica& r = it->second;
      if (r.state != ReplicationState::kInSync && r.state != ReplicationState::kCatchingUp) {
        continue;
      }
      OrderSnapshot(
          r, ReplicationState::kDiverged,
          "its outcome or digest at seq " + std::to_string(d.seq) + " differs from the majority's");
      cover = Cover::kUnknown;
    }
  }
}

}  // namespace vsc::director
