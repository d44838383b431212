#include "director/replicator.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <optional>

#include "net/endpoint.h"
#include "proto/envelope.h"
#include "replication/digest.h"
#include "replication/replica_store.h"

namespace vsc::director {

using replication::Digest;
using replication::Entry;
using replication::EntryResult;

namespace {

constexpr size_t kMaxReplicateEntries = 512;
// A Replicate message gathers entries up to this many payload bytes; an entry larger than that
// travels alone, so one message holds at most max(kMaxReplicateBytes, one entry).
constexpr uint64_t kMaxReplicateBytes = 256 * 1024;
// An entry's encoding adds to its payload (SQL + 8 bytes a parameter, as Submit counts it) only
// tags, lengths and the fixed fields: far less than 64 KiB even at 1,000 statements.
static_assert(kMaxWritePayload + 64 * 1024 <= proto::kMaxBodyBytes,
              "one write of kMaxWritePayload must fit one Replicate envelope");
static_assert(kMaxReplicateBytes <= kMaxWritePayload);
constexpr auto kTickPeriod = std::chrono::milliseconds(200);
constexpr auto kTrimPeriod = std::chrono::seconds(1);

// What a new log records from schema_db: its schema and the checksum of its content (seq 0).
struct Bootstrap {
  std::vector<std::string> ddl;
  std::string checksum;
};

Result<Bootstrap> ReadBootstrap(const ReplicatorOptions& o) {
  if (o.schema_db.empty()) {
    return InvalidArgument("the replication log '" + o.log_file +
                           "' is new: set schema_db to the database every replica starts from "
                           "(its schema and content define seq 0)");
  }
  auto ddl = replication::SchemaMirror::ReadSchema(o.schema_db);
  if (!ddl.ok()) return ddl.status().Annotate("schema_db '" + o.schema_db + "'");
  auto sum = replication::Checksum(o.schema_db);
  if (!sum.ok()) return sum.status().Annotate("checksum of schema_db '" + o.schema_db + "'");
  return Bootstrap{std::move(ddl).value(), std::move(sum).value()};
}

}  // namespace

std::string_view ReplicationStateName(ReplicationState state) {
  switch (state) {
    case ReplicationState::kCatchingUp:
      return "CATCHING_UP";
    case ReplicationState::kInSync:
      return "IN_SYNC";
    case ReplicationState::kNeedsSnapshot:
      return "NEEDS_SNAPSHOT";
    case ReplicationState::kDiverged:
      return "DIVERGED";
    case ReplicationState::kDown:
      return "DOWN";
    case ReplicationState::kFenced:
      return "FENCED";
    case ReplicationState::kAwaitingHead:
      return "AWAITING_HEAD";
  }
  return "?";
}

Replicator::Replicator(asio::io_context& io, ControlPlane& plane, const Clock& clock,
                       ReplicatorOptions options)
    : io_(io),
      plane_(plane),
      clock_(clock),
      options_(std::move(options)),
      timer_(io),
      tracker_(options_.policy) {}

Replicator::~Replicator() = default;

Result<std::unique_ptr<Replicator>> Replicator::Open(asio::io_context& io, ControlPlane& plane,
                                                     const Clock& clock,
                                                     ReplicatorOptions options) {
  std::unique_ptr<Replicator> r(new Replicator(io, plane, clock, std::move(options)));
  const ReplicatorOptions& o = r->options_;
  // A new log: read the bootstrap first, so that a bad schema_db creates no log file.
  std::error_code fs_ec;
  const bool is_new = !std::filesystem::exists(o.log_file, fs_ec);
  std::optional<Bootstrap> bootstrap;
  if (is_new) {
    VSC_ASSIGN_OR_RETURN(bootstrap, ReadBootstrap(o));
  }
  replication::LogOptions log_options = o.log;
  if (o.require_lease) {
    log_options.bump_epoch = false;  // the epoch comes from the lease (SetLease)
    r->lease_.refusal = "the sequencer lease is not held yet; claiming it";
  }
  auto log = replication::ReplicationLog::Open(o.log_file, log_options);
  if (!log.ok()) return log.status().Annotate("replication log '" + o.log_file + "'");
  r->log_ = std::move(log).value();
  if (r->log_->BootstrapChecksum().empty()) {
    if (!bootstrap) {
      VSC_ASSIGN_OR_RETURN(bootstrap, ReadBootstrap(o));
    }
    const std::vector<std::string>& ddl = bootstrap->ddl;
    const std::string& sum = bootstrap->checksum;
    VSC_RETURN_IF_ERROR(r->log_->SetBootstrap(ddl, sum).Annotate("recording the bootstrap"));
    spdlog::info("replication log {} created from {} ({} schema statements, checksum {})",
                 o.log_file, o.schema_db, ddl.size(), sum);
  } else if (!o.schema_db.empty()) {
    auto sum = replication::Checksum(o.schema_db);
    if (sum.ok() && *sum != r->log_->BootstrapChecksum()) {
      spdlog::warn("schema_db {} differs from the bootstrap recorded in {}; the log's is used",
                   o.schema_db, o.log_file);
    }
  }
  auto mirror = replication::SchemaMirror::Create();
  if (!mirror.ok()) return mirror.status().Annotate("schema mirror");
  r->mirror_ = std::move(mirror).value();
  auto schema = r->log_->Schema();
  if (!schema.ok()) return schema.status().Annotate("reading the schema from the log");
  VSC_RETURN_IF_ERROR(r->mirror_->LoadSchema(*schema).Annotate("loading the schema mirror"));
  const uint64_t last = r->log_->last_seq();
  r->ResumeAfter(r->log_->epoch(), last, r->log_->last_ts_micros());
  spdlog::info("replication: epoch {}, log holds seq {}..{}, policy {}", r->log_->epoch(),
               r->log_->first_seq(), last, replication::CommitPolicyName(o.policy));
  return r;
}

void Replicator::SetListeners(Listener membership_changed, Listener progress) {
  membership_changed_ = std::move(membership_changed);
  progress_ = std::move(progress);
}

void Replicator::Start() {
  last_trim_ = clock_.Now();
  ArmTimer();
}

void Replicator::ArmTimer() {
  timer_.expires_after(kTickPeriod);
  timer_.async_wait([this](const asio::error_code& ec) {
    if (ec || stopped_) return;
    Tick();
    ArmTimer();
  });
}

void Replicator::Stop() {
  if (stopped_) return;
  stopped_ = true;
  timer_.cancel();
  for (Accepted& a : batch_) {
    if (a.done) {
      Refuse(a.done, a.request_id, kWriteUnavailable,
             "unavailable: the director is stopping; the write was not applied");
    }
  }
  batch_.clear();
  FailWaiting([](uint64_t seq) {
    return std::pair{kWriteUnknown,
                     "outcome unknown: the director stopped after sequencing seq " +
                         std::to_string(seq) +
                         " and before the commit policy was met; the write is in the log and "
                         "will reach every replica"};
  });
  queued_bytes_ = 0;
  if (auto latest = digests_.LatestAgreed(); latest && latest->first > agreed_persisted_) {
    (void)log_->SetAgreedDigest(latest->first, latest->second);
  }
}

void Replicator::FailWaiting(
    const std::function<std::pair<int, std::string>(uint64_t seq)>& outcome) {
  FailHeld();  // decided, but their answers relied on a set etcd may never hold
  for (auto& [seq, w] : waiting_) {
    auto [code, error] = outcome(seq);
    proto::WriteResponse resp;
    resp.set_ok(false);
    resp.set_code(code);
    resp.set_seq(seq);
    resp.set_epoch(sequencer_->epoch());
    resp.set_error(std::move(error));
    AnswerWaiting(seq, w, std::move(resp));
  }
  waiting_.clear();
  waiting_keys_.clear();
}

void Replicator::ResumeAfter(uint64_t epoch, uint64_t seq, int64_t ts) {
  sequencer_ = std::make_unique<replication::Sequencer>(epoch, seq, ts);
  recent_.clear();
  recent_bytes_ = 0;
  recent_first_ = seq + 1;
  committed_seq_ = seq;
}

// ---- snapshots ----------------------------------------------------------------------------

void Replicator::OrderSnapshot(Replica& r, ReplicationState state, const std::string& reason) {
  if (state == ReplicationState::kDiverged) {
    counters_.divergences.Add();
    spdlog::error("replica {} DIVERGED: {}", r.id, reason);
  }
  r.state = state;
  r.reason = reason;
  r.window.Reset();
  r.in_flight.clear();
  r.tracked_from = UINT64_MAX;
  r.snapshot_sent = false;
  r.snapshot_peer.clear();
  Decide(tracker_.Forget(r.id));
  // Its data must not be served (lookups included) until it has caught up again. A server that
  // is DOWN or DRAINING takes no work anyway: nothing to change.
  if (plane_.BeginCatchUp(r.id, "replication: " + reason, clock_.Now()).ok()) {
    Notify(membership_changed_);
  }
  SendSnapshotOrders();
  Notify(progress_);
}

const Replicator::Replica* Replicator::HealthyPeer(const std::string& except,
                                                   const std::string& avoid) const {
  const Replica* best = nullptr;
  const Replica* avoided = nullptr;
  for (const auto& [id, r] : replicas_) {
    if (id == except || !r.link || r.state != ReplicationState::kInSync || r.http_port == 0) {
      continue;
    }
    const membership::ServerRecord* rec = plane_.membership().Find(id);
    // JOINING counts: an in-sync replica awaiting its first heartbeat already serves snapshots.
    if (rec == nullptr ||
        (rec->state != membership::State::kActive && rec->state != membership::State::kBusy &&
         rec->state != membership::State::kJoining)) {
      continue;
    }
    if (id == avoid) {
      avoided = &r;
    } else if (best == nullptr || r.acked_seq > best->acked_seq) {
      best = &r;
    }
  }
  return best != nullptr ? best : avoided;
}

void Replicator::SendSnapshotOrders() {
  if (NotSequencing()) return;
  for (auto& [id, r] : replicas_) {
    if (!r.link || r.snapshot_sent) continue;
    if (r.state != ReplicationState::kNeedsSnapshot && r.state != ReplicationState::kDiverged) {
      continue;
    }
    const Replica* peer = HealthyPeer(id, r.failed_snapshot_peer);
    if (peer == nullptr) continue;  // retried on every tick and whenever a replica gets in sync
    proto::Message m;
    proto::InstallSnapshot* is = m.mutable_install_snapshot();
    is->set_peer_id(peer->id);
    is->set_host(peer->http_host);
    is->set_http_port(peer->http_port);
    is->set_epoch(sequencer_->epoch());
    is->set_reason(r.reason);
    r.link->Send(m);
    r.snapshot_sent = true;
    r.snapshot_peer = peer->id;
    counters_.snapshots_ordered.Add();
    spdlog::info("replica {} told to copy a snapshot from {} ({}): {}", id, peer->id,
                 net::HostPort(peer->http_host, peer->http_port), r.reason);
  }
}

// ---- streaming ----------------------------------------------------------------------------

Result<std::vector<Replicator::EntryPtr>> Replicator::EntriesFrom(uint64_t from, size_t max_entries,
                                                                  uint64_t max_bytes) {
  std::vector<EntryPtr> out;
  if (from >= recent_first_) {
    uint64_t bytes = 0;
    for (size_t i = from - recent_first_; i < recent_.size() && out.size() < max_entries; ++i) {
      const uint64_t b = recent_[i]->payload_bytes;
      if (!out.empty() && bytes + b > max_bytes) break;
      bytes += b;
      out.push_back(recent_[i]);
    }
    return out;
  }
  auto read = log_->Read(from, max_entries, max_bytes);
  if (!read.ok()) return read.status();
  out.reserve(read->size());
  for (Entry& e : *read) out.push_back(MakeStreamEntry(std::move(e)));
  return out;
}

void Replicator::Pump(Replica& r) {
  if (!r.link ||
      (r.state != ReplicationState::kInSync && r.state != ReplicationState::kCatchingUp)) {
    return;
  }
  if (NotSequencing()) return;  // a director without the lease sends nothing
  const uint64_t head = last_seq();
  const bool was_full = r.window.full();
  while (r.next_seq <= head && r.window.CanSend(0)) {
    const WindowLimits& lim = r.window.limits();
    const size_t room =
        std::min<size_t>(kMaxReplicateEntries, lim.max_entries - r.window.entries());
    const uint64_t byte_room =
        std::min<uint64_t>(kMaxReplicateBytes,
                           lim.max_bytes > r.window.bytes() ? lim.max_bytes - r.window.bytes() : 0);
    auto entries =
        EntriesFrom(r.next_seq, std::max<size_t>(room, 1), std::max<uint64_t>(byte_room, 1));
    if (!entries.ok()) {
      if (entries.status().code() == Code::kNotFound) {
        OrderSnapshot(r, ReplicationState::kNeedsSnapshot,
                      "the log no longer holds seq " + std::to_string(r.next_seq));
      } else {
        spdlog::error("replica {}: reading the log from seq {}: {}", r.id, r.next_seq,
                      entries.status().ToString());
      }
      return;
    }
    uint64_t msg_bytes = 0;
    size_t n = 0;
    for (const EntryPtr& e : *entries) {
      if (e->entry.seq != r.next_seq + n) break;  // never send a gap
      const uint64_t b = e->payload_bytes;
      if (!r.window.CanSend(b)) break;
      if (n > 0 && msg_bytes + b > kMaxReplicateBytes) break;
      r.window.OnSent(e->entry.seq, b);
      r.in_flight.push_back(e);
      msg_bytes += b;
      ++n;
    }
    if (n == 0) break;
    r.next_seq += n;
    r.entries_sent += n;
    // The entries' encodings were made once, for every stream (stream_entry.h).
    EncodeReplicate(std::span<const EntryPtr>(entries->data(), n), head, sequencer_->epoch(),
                    replicate_buf_);
    counters_.replicate_messages.Add();
    r.link->SendEncoded(replicate_buf_);
  }
  if (!was_full && r.window.full()) counters_.busy_events.Add();
}

void Replicator::PumpAll() {
  for (auto& [id, r] : replicas_) Pump(r);
}

// ---- agreed digests -----------------------------------------------------------------------

std::optional<Digest> Replicator::AgreedAt(uint64_t seq) const {
  if (auto d = digests_.AgreedAt(seq)) return d;
  auto d = log_->AgreedDigest(seq);
  if (d.ok()) return *d;
  return std::nullopt;
}

void Replicator::Tick() {
  const TimePoint now = clock_.Now();
  // One log write per tick records where the replicas agree, for replicas returning after a
  // director restart (a write per decision would cost a transaction per entry).
  if (auto latest = digests_.LatestAgreed(); latest && latest->first > agreed_persisted_) {
    if (Status s = log_->SetAgreedDigest(latest->first, latest->second); s.ok()) {
      agreed_persisted_ = latest->first;
    } else {
      spdlog::warn("recording the agreed digest at seq {}: {}", latest->first, s.ToString());
    }
  }
  if (now - last_trim_ >= kTrimPeriod) {
    last_trim_ = now;
    auto trimmed = log_->Trim();
    if (!trimmed.ok()) {
      spdlog::warn("log retention: {}", trimmed.status().ToString());
    } else if (*trimmed > 0) {
      spdlog::debug("log retention trimmed {} entries; log holds {}..{}", *trimmed,
                    log_->first_seq(), log_->last_seq());
    }
  }
  // Chain steps below every streaming replica's position are never needed again.
  uint64_t low = committed_seq_;
  for (const auto& [id, r] : replicas_) {
    if (r.link && r.state == ReplicationState::kInSync) low = std::min(low, r.acked_seq);
  }
  digests_.ForgetSteps(low);
  verifies_.Tick(now);
  MaybeFinishPromotion();
  RecordInSync();  // a replica that caught up joins etcd's set lazily; a failed write again
  ReleaseHeldIfCovered();
  SendSnapshotOrders();
  for (auto& [id, r] : replicas_) Pump(r);
}

// ---- reads and status ---------------------------------------------------------------------

std::vector<ReadCandidate> Replicator::ReadCandidates() const {
  std::vector<ReadCandidate> out;
  for (const auto& [id, r] : replicas_) {
    if (!r.has_sql || !r.link) continue;
    ReadCandidate c;
    c.id = id;
    c.sql = r.sql;
    c.sql_tcp = r.sql_tcp;
    c.applied_seq = r.acked_seq;
    const membership::ServerRecord* rec = plane_.membership().Find(id);
    c.eligible = r.state == ReplicationState::kInSync && !r.window.full() && rec != nullptr &&
                 rec->state == membership::State::kActive;
    c.load = rec != nullptr ? rec->load.in_flight : 0;
    out.push_back(std::move(c));
  }
  return out;
}

ReplicationStatus Replicator::GetStatus() const {
  ReplicationStatus s;
  s.enabled = true;
  s.epoch = sequencer_->epoch();
  s.first_seq = log_->first_seq();
  s.last_seq = sequencer_->last_seq();
  s.committed_seq = committed_seq_;
  s.policy = std::string(replication::CommitPolicyName(options_.policy));
  s.update_queue = waiting_.size() + batch_.size();
  s.update_queue_capacity = options_.update_queue;
  s.update_queue_bytes = queued_bytes_;
  s.update_queue_bytes_capacity = options_.update_queue_bytes;
  s.pending_decisions = tracker_.pending();
  s.lease_required = options_.require_lease;
  const std::optional<std::string> not_sequencing = NotSequencing();
  s.sequencing = !not_sequencing;
  s.not_sequencing_reason = not_sequencing.value_or("");
  s.fenced_epoch = fenced_epoch_;
  s.promoting = promoting_;
  s.promotion = promotion_outcome_;
  s.in_sync_recorded_required = KeepsInSyncRecord();
  if (const auto& rec = in_sync_.recorded()) {
    s.in_sync_recorded.assign(rec->members.begin(), rec->members.end());
    s.in_sync_recorded_epoch = rec->epoch;
  }
  s.answers_held = held_;
  s.in_sync_error = in_sync_error_;
  for (const auto& [id, r] : replicas_) {
    ReplicaInfo i;
    i.id = id;
    i.state = r.state;
    i.reason = r.reason;
    i.applied_seq = r.acked_seq;
    i.lag = s.last_seq > r.acked_seq ? s.last_seq - r.acked_seq : 0;
    i.digest = replication::DigestHex(r.digest);
    i.busy = r.window.full();
    i.window_entries = r.window.entries();
    i.window_bytes = r.window.bytes();
    i.window_fill = r.window.fill();
    i.snapshot_peer = r.snapshot_peer;
    i.acks = r.acks;
    i.entries_sent = r.entries_sent;
    s.replicas.push_back(std::move(i));
  }
  return s;
}

std::optional<VerifyReport> Replicator::Verify(uint64_t seq) const {
  return verifies_.Report(seq, clock_.Now());
}

}  // namespace vsc::director
