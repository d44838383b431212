#include "director/replicator.h"

#include <arpa/inet.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <optional>

#include "director/replication_wire.h"
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
constexpr size_t kRecentMaxEntries = 65536;
constexpr uint64_t kRecentMaxBytes = 64ull << 20;
constexpr auto kTickPeriod = std::chrono::milliseconds(200);
constexpr auto kTrimPeriod = std::chrono::seconds(1);

std::optional<Digest> ToDigest(const std::string& bytes) {
  if (bytes.size() != Digest{}.size()) return std::nullopt;
  Digest d;
  std::memcpy(d.data(), bytes.data(), d.size());
  return d;
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

// The endpoint's IPv4 address; sin_port 0 when absent or not an IPv4 literal.
sockaddr_in EndpointAddress(const proto::Endpoint* e) {
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  if (e != nullptr && e->port() != 0 && e->port() <= 65535 &&
      inet_pton(AF_INET, e->host().c_str(), &sa.sin_addr) == 1) {
    sa.sin_port = htons(static_cast<uint16_t>(e->port()));
  }
  return sa;
}

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
  auto log = replication::ReplicationLog::Open(o.log_file, o.log);
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
  r->sequencer_ =
      std::make_unique<replication::Sequencer>(r->log_->epoch(), last, r->log_->last_ts_micros());
  r->recent_first_ = last + 1;
  r->committed_seq_ = last;
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
  for (auto& [seq, w] : waiting_) {
    proto::WriteResponse resp;
    resp.set_request_id(w.request_id);
    resp.set_ok(false);
    resp.set_code(kWriteUnknown);
    resp.set_seq(seq);
    resp.set_epoch(sequencer_->epoch());
    resp.set_error("outcome unknown: the director stopped after sequencing seq " +
                   std::to_string(seq) +
                   " and before the commit policy was met; the write is in the log and will "
                   "reach every replica");
    w.done(resp);
  }
  waiting_.clear();
  if (auto latest = digests_.LatestAgreed(); latest && latest->first > agreed_persisted_) {
    (void)log_->SetAgreedDigest(latest->first, latest->second);
  }
}

// ---- registration -------------------------------------------------------------------------

Admission Replicator::Admit(const proto::Register& reg) const {
  Admission a;
  if (!HasCapability(reg, "sql")) return a;
  a.replica = true;
  ReplicaPosition pos;
  pos.applied_seq = reg.applied_seq();
  pos.digest = ToDigest(reg.digest());
  if (pos.applied_seq == 0 && !pos.digest) pos.digest = replication::ZeroDigest();
  pos.content_checksum = reg.content_checksum();
  LogPosition lp;
  lp.first_seq = log_->first_seq();
  lp.last_seq = sequencer_->last_seq();
  lp.bootstrap_checksum = log_->BootstrapChecksum();
  std::optional<Digest> agreed;
  if (pos.applied_seq > 0 && pos.applied_seq <= lp.last_seq) agreed = AgreedAt(pos.applied_seq);
  a.plan = DecideCatchUp(pos, lp, agreed);
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
  if (const auto* sql = FindEndpoint(reg, "sql-udp")) {
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_port = htons(static_cast<uint16_t>(sql->port()));
    if (inet_pton(AF_INET, sql->host().c_str(), &sa.sin_addr) == 1 && sql->port() != 0) {
      r.sql = sa;
      r.has_sql = true;
    }
  }
  const CatchUpPlan& plan = admission.plan;
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
    while (!r.in_flight.empty() && r.in_flight.front()->seq < seq) r.in_flight.pop_front();
    if (r.in_flight.empty() || r.in_flight.front()->seq != seq) continue;  // never sent
    const Entry& entry = *r.in_flight.front();
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
  while (!r.in_flight.empty() && r.in_flight.front()->seq <= applied) r.in_flight.pop_front();
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

void Replicator::Decide(std::vector<replication::Decision> decisions) {
  for (replication::Decision& d : decisions) {
    committed_seq_ = std::max(committed_seq_, d.seq);
    if (!d.unacknowledged) digests_.RecordAgreed(d.seq, d.digest);
    verifies_.OnDecided(d.seq, d.result.checksum);
    if (auto w = waiting_.find(d.seq); w != waiting_.end()) {
      proto::WriteResponse resp;
      resp.set_request_id(w->second.request_id);
      resp.set_seq(d.seq);
      resp.set_epoch(sequencer_->epoch());
      resp.set_code(d.result.code);
      resp.set_rows_changed(d.result.rows_changed);
      AddStatementOutcomes(d.result, resp);
      if (d.unacknowledged) {
        resp.set_ok(false);
        resp.set_code(kWriteUnknown);
        resp.set_error("outcome unknown: every replica went down before acknowledging seq " +
                       std::to_string(d.seq) +
                       "; the write is in the log and is applied when a replica returns");
      } else if (d.result.code == 0) {
        resp.set_ok(true);
        counters_.writes_committed.Add();
      } else {
        resp.set_ok(false);
        resp.set_error("statement failed on the replicas and was rolled back everywhere: " +
                       d.result.error);
        counters_.writes_failed.Add();
      }
      WriteDone done = std::move(w->second.done);
      waiting_.erase(w);
      done(resp);
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
    }
  }
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
    is->set_reason(r.reason);
    r.link->Send(m);
    r.snapshot_sent = true;
    r.snapshot_peer = peer->id;
    counters_.snapshots_ordered.Add();
    spdlog::info("replica {} told to copy a snapshot from {} ({}:{}): {}", id, peer->id,
                 peer->http_host, peer->http_port, r.reason);
  }
}

// ---- writes -------------------------------------------------------------------------------

void Replicator::Refuse(const WriteDone& done, uint64_t request_id, int code,
                        const std::string& error) {
  switch (code) {
    case kWriteOverloaded:
      counters_.writes_overloaded.Add();
      break;
    case kWriteUnavailable:
      counters_.writes_unavailable.Add();
      break;
    default:
      counters_.writes_refused.Add();
      break;
  }
  proto::WriteResponse resp;
  resp.set_request_id(request_id);
  resp.set_ok(false);
  resp.set_code(code);
  resp.set_error(error);
  done(resp);
}

std::set<std::string> Replicator::Participants() const {
  std::set<std::string> out;
  for (const auto& [id, r] : replicas_) {
    if (r.link && r.state == ReplicationState::kInSync) out.insert(id);
  }
  return out;
}

void Replicator::Submit(const proto::WriteRequest& request, WriteDone done) {
  const uint64_t rid = request.request_id();
  if (stopped_) {
    Refuse(done, rid, kWriteUnavailable, "unavailable: the director is stopping; not applied");
    return;
  }
  if (waiting_.size() + batch_.size() >= options_.update_queue) {
    Refuse(done, rid, kWriteOverloaded,
           "overloaded: update queue full (" + std::to_string(options_.update_queue) +
               "); the write was not applied, retry later");
    return;
  }
  const int n = request.statements_size();
  if (n == 0) {
    Refuse(done, rid, kWriteRefused,
           "statement refused: the request holds no statement; send one statement, or several "
           "as an atomic batch");
    return;
  }
  if (static_cast<size_t>(n) > kMaxBatchStatements) {
    Refuse(done, rid, kWriteRefused,
           "statement refused: a batch holds at most " + std::to_string(kMaxBatchStatements) +
               " statements, this one " + std::to_string(n) + "; split it");
    return;
  }
  Accepted a;
  a.request_id = rid;
  size_t payload = 0;
  for (int i = 0; i < n; ++i) {
    const proto::SqlStatement& s = request.statements(i);
    const std::string where = n > 1 ? "statement " + std::to_string(i + 1) + ": " : "";
    if (s.sql().size() > kMaxSqlBytes) {
      Refuse(done, rid, kWriteRefused,
             "statement refused: " + where + "the SQL text is " + std::to_string(s.sql().size()) +
                 " bytes, over the limit of " + std::to_string(kMaxSqlBytes) +
                 "; bind large values as parameters");
      return;
    }
    if (static_cast<size_t>(s.params_size()) > kMaxParams) {
      Refuse(done, rid, kWriteRefused,
             "statement refused: " + where + std::to_string(s.params_size()) +
                 " parameters, over the limit of " + std::to_string(kMaxParams));
      return;
    }
    replication::Statement st = FromProto(s);
    payload += st.sql.size();
    for (const auto& p : st.params) payload += p.bytes.size() + 8;
    if (payload > kMaxWritePayload) {
      Refuse(done, rid, kWriteRefused,
             "statement refused: the request carries more than " +
                 std::to_string(kMaxWritePayload) + " bytes of SQL and parameters; split it");
      return;
    }
    a.statements.push_back(std::move(st));
  }
  std::vector<replication::StatementKind> kinds;
  if (a.statements.size() == 1) {
    auto kind = mirror_->Check(a.statements[0]);
    if (!kind.ok()) {
      Refuse(done, rid, kWriteRefused, kind.status().message());
      return;
    }
    kinds.push_back(*kind);
  } else {
    // DDL early in a batch is visible to the statements after it.
    auto checked = mirror_->CheckBatch(a.statements);
    if (!checked.ok()) {
      Refuse(done, rid, kWriteRefused, checked.status().message());
      return;
    }
    kinds = std::move(checked).value();
  }
  for (size_t i = 0; i < kinds.size(); ++i) {
    const std::string where = n > 1 ? "statement " + std::to_string(i + 1) + ": " : "";
    if (kinds[i] == replication::StatementKind::kRead) {
      Refuse(done, rid, kWriteRefused,
             "statement refused: " + where +
                 "read-only statement on the write port; send reads to the SQL read port");
      return;
    }
    if (kinds[i] == replication::StatementKind::kDdl) a.ddl.push_back(i);
  }
  if (Participants().empty()) {
    Refuse(done, rid, kWriteUnavailable,
           "unavailable: no replica is in sync (every replica is down, catching up or waiting "
           "for a snapshot); the write was not applied");
    return;
  }
  counters_.writes_accepted.Add();
  a.done = std::move(done);
  Enqueue(std::move(a));
}

void Replicator::Enqueue(Accepted accepted) {
  batch_.push_back(std::move(accepted));
  if (!flush_posted_) {
    flush_posted_ = true;
    // Every write accepted before this handler runs joins the same Append (group commit).
    asio::post(io_, [this] { Flush(); });
  }
}

Result<uint64_t> Replicator::StartVerify() {
  if (stopped_) return Unavailable("the director is stopping");
  if (Participants().empty()) {
    return Unavailable("no replica is in sync; nothing to verify");
  }
  Accepted a;
  a.kind = Entry::Kind::kChecksum;
  const uint64_t before = verifies_.last_seq();
  batch_.push_back(std::move(a));
  Flush();  // at once, so the caller learns the marker's seq
  if (verifies_.last_seq() == before) {
    return Unavailable("the checksum marker could not be sequenced");
  }
  return verifies_.last_seq();
}

void Replicator::Flush() {
  flush_posted_ = false;
  if (batch_.empty() || stopped_) return;
  std::vector<Accepted> batch = std::move(batch_);
  batch_.clear();
  const std::set<std::string> parts = Participants();
  if (parts.empty()) {
    for (Accepted& a : batch) {
      if (a.done) {
        Refuse(a.done, a.request_id, kWriteUnavailable,
               "unavailable: no replica is in sync; the write was not applied");
      }
    }
    return;
  }
  std::vector<Entry> entries;
  entries.reserve(batch.size());
  const int64_t now = clock_.WallMicros();
  for (Accepted& a : batch) entries.push_back(sequencer_->Assign(a.statements, a.kind, now));
  if (Status s = log_->Append(entries); !s.ok()) {
    spdlog::error("replication log append failed: {}", s.ToString());
    sequencer_ = std::make_unique<replication::Sequencer>(log_->epoch(), log_->last_seq(),
                                                          log_->last_ts_micros());
    for (Accepted& a : batch) {
      if (a.done) {
        Refuse(a.done, a.request_id, kWriteLogFailed,
               "the director could not write its log (" + s.message() +
                   "); the write was not applied");
      }
    }
    return;
  }
  counters_.group_commits.Add();
  counters_.entries_sequenced.Add(entries.size());
  for (size_t i = 0; i < batch.size(); ++i) {
    Entry& e = entries[i];
    for (size_t idx : batch[i].ddl) {
      if (Status s = mirror_->ApplyDdl(e.statements[idx]); !s.ok()) {
        spdlog::warn("schema mirror: seq {}: {}", e.seq, s.ToString());
      }
    }
    Status tracked = tracker_.Track(e.seq, parts);
    if (!tracked.ok()) spdlog::error("commit tracker: seq {}: {}", e.seq, tracked.ToString());
    if (batch[i].done) {
      waiting_[e.seq] = Waiting{batch[i].request_id, std::move(batch[i].done)};
    }
    if (e.kind == Entry::Kind::kChecksum) {
      std::set<std::string> expected;
      std::map<std::string, std::string> skipped;
      for (const auto& [id, r] : replicas_) {
        if (!r.link) continue;
        if (r.state == ReplicationState::kInSync || r.state == ReplicationState::kCatchingUp) {
          expected.insert(id);
        } else {
          skipped[id] = std::string(ReplicationStateName(r.state));
        }
      }
      verifies_.Start(e.seq, clock_.Now(), std::move(expected), std::move(skipped));
    }
    recent_bytes_ += replication::PayloadBytes(e);
    recent_.push_back(std::make_shared<const Entry>(std::move(e)));
  }
  while (!recent_.empty() &&
         (recent_.size() > kRecentMaxEntries || recent_bytes_ > kRecentMaxBytes)) {
    recent_bytes_ -= replication::PayloadBytes(*recent_.front());
    recent_.pop_front();
    recent_first_++;
  }
  PumpAll();
}

// ---- streaming ----------------------------------------------------------------------------

Result<std::vector<Replicator::EntryPtr>> Replicator::EntriesFrom(uint64_t from, size_t max_entries,
                                                                  uint64_t max_bytes) {
  std::vector<EntryPtr> out;
  if (from >= recent_first_) {
    uint64_t bytes = 0;
    for (size_t i = from - recent_first_; i < recent_.size() && out.size() < max_entries; ++i) {
      const uint64_t b = replication::PayloadBytes(*recent_[i]);
      if (!out.empty() && bytes + b > max_bytes) break;
      bytes += b;
      out.push_back(recent_[i]);
    }
    return out;
  }
  auto read = log_->Read(from, max_entries, max_bytes);
  if (!read.ok()) return read.status();
  out.reserve(read->size());
  for (Entry& e : *read) out.push_back(std::make_shared<const Entry>(std::move(e)));
  return out;
}

void Replicator::Pump(Replica& r) {
  if (!r.link ||
      (r.state != ReplicationState::kInSync && r.state != ReplicationState::kCatchingUp)) {
    return;
  }
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
    proto::Message m;
    proto::Replicate* rep = m.mutable_replicate();
    uint64_t msg_bytes = 0;
    size_t n = 0;
    for (const EntryPtr& e : *entries) {
      if (e->seq != r.next_seq + n) break;  // never send a gap
      const uint64_t b = replication::PayloadBytes(*e);
      if (!r.window.CanSend(b)) break;
      if (n > 0 && msg_bytes + b > kMaxReplicateBytes) break;
      ToProto(*e, rep->add_entries());
      r.window.OnSent(e->seq, b);
      r.in_flight.push_back(e);
      msg_bytes += b;
      ++n;
    }
    if (n == 0) break;
    r.next_seq += n;
    r.entries_sent += n;
    rep->set_head_seq(head);
    counters_.replicate_messages.Add();
    r.link->Send(m);
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
  s.pending_decisions = tracker_.pending();
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
