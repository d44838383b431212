#include "director/admin_api.h"

#include <openssl/crypto.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "director/default_services.h"
#include "director/http_json.h"
#include "director/service_metrics.h"
#include "sched/scheduler.h"

namespace vsc::director {
namespace {

using json = nlohmann::json;

net::HttpResponse Json(int status, const json& body) { return JsonResponse(status, body); }
net::HttpResponse Error(int status, const std::string& message) {
  return ErrorResponse(status, message);
}

Result<json> ParseBody(const std::string& body) { return ParseJsonObject(body); }

// /v1/status's protocol names and the rate series' prefixes.
std::string LookupName(vservice::Proto proto) {
  return proto == vservice::Proto::kUdp ? "UDP" : "TCP";
}

}  // namespace

AdminApi::AdminApi(ControlPlane& plane, ControlServer& control, const DirectorConfig& config,
                   const Clock& clock, std::string token, uint16_t service_port)
    : plane_(plane),
      control_(control),
      config_(config),
      clock_(clock),
      token_(std::move(token)),
      service_port_(service_port) {}

void AdminApi::SetServices(ServiceEditor* services) {
  services_ = services;
  service_routes_ = services ? std::make_unique<ServiceRoutes>(*services, clock_) : nullptr;
}

bool AdminApi::Authorized(const net::HttpRequest& req) const {
  auto auth = req.Header("Authorization");
  const std::string expected = "Bearer " + token_;
  return auth && auth->size() == expected.size() &&
         CRYPTO_memcmp(auth->data(), expected.data(), expected.size()) == 0;
}

asio::awaitable<net::HttpResponse> AdminApi::Serve(net::HttpRequest request) {
  // ipvsadm -L -c: the only route that waits for the workers (each lists its own flows).
  if (request.method == "GET" && request.path == kConnectionsPath && services_ &&
      Authorized(request)) {
    co_return JsonResponse(200, FlowsJson(co_await services_->Flows()));
  }
  net::HttpResponse response = Handle(request);
  const bool changed = request.method != "GET" && response.status >= 200 && response.status < 300;
  if (!changed || !view_barrier_) co_return response;
  if (co_await AwaitViewBarrier(view_barrier_, view_barrier_timeout_)) co_return response;
  co_return Error(503,
                  "the change was made, but the worker threads did not take the new view "
                  "within " +
                      std::to_string(static_cast<int64_t>(ToMillis(view_barrier_timeout_))) +
                      " ms (a worker is stuck or the machine is overloaded); check GET "
                      "/v1/status before relying on it");
}

net::HttpResponse AdminApi::Handle(const net::HttpRequest& req) {
  if (!Authorized(req)) {
    net::HttpResponse r = Error(401, "missing or wrong bearer token (see admin_token_file)");
    r.headers.emplace_back("WWW-Authenticate", "Bearer");
    return r;
  }
  const std::string& path = req.path;
  if (ServiceRoutes::Owns(path)) {
    if (service_routes_) return service_routes_->Handle(req);
    return Error(409, "this director runs no virtual-service table (ServiceEditor not wired)");
  }
  if (req.method == "GET" && path == "/v1/status") return Status();
  if (req.method == "GET" && path == "/metrics") return Metrics();
  if (req.method == "POST" && path == "/v1/scheduler") return SetScheduler(req.body);
  if (req.method == "POST" && path == "/v1/persistence") return SetPersistence(req.body);
  if (req.method == "GET" && path == "/v1/replication") return Replication();
  if (req.method == "POST" && path == "/v1/verify") return StartVerify();
  if (req.method == "GET" && path.rfind("/v1/verify/", 0) == 0) {
    return VerifyResult(path.substr(std::string("/v1/verify/").size()));
  }
  const std::string prefix = "/v1/servers/";
  if (req.method == "POST" && path.rfind(prefix, 0) == 0) {
    std::string rest = path.substr(prefix.size());
    auto slash = rest.find('/');
    if (slash != std::string::npos) {
      return ServerAction(rest.substr(0, slash), rest.substr(slash + 1), req.body);
    }
  }
  return Error(404, "no such endpoint: " + req.method + " " + path);
}

net::HttpResponse AdminApi::ServerAction(const std::string& id, const std::string& action,
                                         const std::string& body) {
  vsc::Status s;
  if (action == "weight") {
    auto j = ParseBody(body);
    if (!j.ok()) return Error(400, j.status().message());
    if (!j->contains("weight") || !(*j)["weight"].is_number_unsigned()) {
      return Error(400, "body must be {\"weight\": N} with N from 0 to 65535");
    }
    uint64_t w = (*j)["weight"].get<uint64_t>();
    if (w > membership::kMaxWeight) return Error(400, "weight must be 0 to 65535");
    s = plane_.SetWeight(id, static_cast<uint32_t>(w), clock_.Now());
  } else if (action == "drain") {
    s = plane_.Drain(id, clock_.Now());
  } else if (action == "remove") {
    s = control_.RemoveServer(id);
  } else {
    return Error(404, "unknown server action '" + action + "' (weight, drain, remove)");
  }
  if (!s.ok()) return Error(HttpStatusFor(s), s.message());
  control_.PublishIfNeeded();
  return Json(200, json{{"ok", true}});
}

std::vector<ServiceRuntime> AdminApi::LookupRuntime() const {
  std::vector<ServiceRuntime> out;
  if (services_ == nullptr) return out;
  const auto keys = BuiltinServiceKeys(config_, service_port_);
  std::vector<ServiceRuntime> all = services_->Runtime();
  for (vservice::Proto proto : {vservice::Proto::kUdp, vservice::Proto::kTcp}) {
    for (ServiceRuntime& r : all) {
      if (r.key.proto == proto && keys.contains(r.key)) out.push_back(std::move(r));
    }
  }
  return out;
}

net::HttpResponse AdminApi::EditLookup(const std::function<void(vservice::ServiceConfig&)>& edit) {
  if (services_ == nullptr) return Error(409, "this director runs no virtual-service table");
  vservice::VirtualServiceTable next = services_->table();
  for (const vservice::ServiceKey& key : BuiltinServiceKeys(config_, service_port_)) {
    const vservice::VirtualService* vs = next.Find(key);
    if (vs == nullptr) continue;
    vservice::ServiceConfig config = vs->config;
    edit(config);
    if (auto c = next.EditService(key, config); !c.ok()) return ErrorResponse(c.status());
  }
  if (auto c = services_->Commit(std::move(next)); !c.ok()) return ErrorResponse(c.status());
  return Json(200, json{{"ok", true}});
}

net::HttpResponse AdminApi::SetScheduler(const std::string& body) {
  auto j = ParseBody(body);
  if (!j.ok()) return Error(400, j.status().message());
  if (!j->contains("scheduler") || !(*j)["scheduler"].is_string()) {
    return Error(400, "body must be {\"scheduler\": \"name\"}");
  }
  const std::string name = (*j)["scheduler"].get<std::string>();
  // The scheduler's own refusal names the valid ones.
  if (auto made = sched::MakeScheduler(name); !made.ok())
    return Error(400, made.status().message());
  return EditLookup([&name](vservice::ServiceConfig& c) { c.scheduler = name; });
}

net::HttpResponse AdminApi::SetPersistence(const std::string& body) {
  auto j = ParseBody(body);
  if (!j.ok()) return Error(400, j.status().message());
  if (!j->contains("timeout_s") || !(*j)["timeout_s"].is_number_unsigned()) {
    return Error(400, "body must be {\"timeout_s\": N, \"netmask\": \"255.255.255.255\"}");
  }
  std::optional<int> prefix;
  if (j->contains("netmask")) {
    if (!(*j)["netmask"].is_string()) return Error(400, "netmask must be a string");
    // A dotted mask for an IPv4 listen address, a prefix length for an IPv6 one (ipvsadm -M).
    const auto vip = vservice::IpAddress::Parse(config_.listen);
    auto m = vservice::ParseNetmask((*j)["netmask"].get<std::string>(),
                                    vip.ok() ? vip->family() : vservice::Family::kV4);
    if (!m.ok()) return Error(400, m.status().message());
    prefix = *m;
  }
  const uint32_t timeout_s = (*j)["timeout_s"].get<uint32_t>();
  return EditLookup([&](vservice::ServiceConfig& c) {
    if (timeout_s == 0) {
      c.persistence.reset();
      return;
    }
    const int keep = c.persistence ? c.persistence->prefix_len : 32;
    c.persistence = vservice::Persistence{timeout_s, prefix.value_or(keep)};
  });
}

void AdminApi::SampleRates() {
  if (service_routes_) service_routes_->SampleRates();
  const TimePoint now = clock_.Now();
  for (const ServiceRuntime& r : LookupRuntime()) {
    const std::string name = LookupName(r.key.proto);
    rates_.Update("svc/" + name, ServiceTotals(r), now);
    for (const DestRuntime& d : r.dests)
      rates_.Update(name + "/" + d.server_id, DestTotals(d), now);
  }
}

net::HttpResponse AdminApi::Status() {
  json services = json::array();
  for (const ServiceRuntime& r : LookupRuntime()) {
    const vservice::VirtualService* vs = services_->table().Find(r.key);
    if (vs == nullptr) continue;
    const bool udp = r.key.proto == vservice::Proto::kUdp;
    const std::string name = LookupName(r.key.proto);
    json servers = json::array();
    for (const DestRuntime& d : r.dests) {
      const membership::ServerRecord* rec = plane_.membership().Find(d.server_id);
      if (rec == nullptr) continue;
      // In dr mode the director never sees a request end: the server's own in-flight count is
      // its active work. Through the TCP proxy the director counts open connections itself.
      uint64_t active = udp ? rec->load.in_flight : d.active_conns;
      servers.push_back({{"id", d.server_id},
                         {"address", vservice::ToString(d.dest)},
                         {"forward", udp ? "Route" : "Masq"},
                         {"weight", rec->weight},
                         {"active", active},
                         {"inactive", 0},
                         {"state", membership::StateName(rec->state)},
                         {"stats", TotalsJson(DestTotals(d))},
                         {"rates", RatesJson(rates_.Get(name + "/" + d.server_id))},
                         {"load",
                          {{"run_queue", rec->load.run_queue},
                           {"cpu_pct", rec->load.cpu_pct},
                           {"in_flight", rec->load.in_flight},
                           {"response_ms", rec->load.response_ms}}},
                         {"heartbeats", rec->heartbeats}});
    }
    const auto& p = vs->config.persistence;
    const vservice::Family family = r.key.vip.family();
    const int prefix = p ? p->prefix_len : r.key.vip.max_prefix();
    services.push_back({{"protocol", name},
                        {"address", vservice::ToString(r.key.vip_port())},
                        {"scheduler", vs->config.scheduler},
                        {"persistence_timeout_s", p ? p->timeout_s : 0},
                        {"persistence_netmask", vservice::FormatNetmask(prefix, family)},
                        {"stats", TotalsJson(ServiceTotals(r))},
                        {"rates", RatesJson(rates_.Get("svc/" + name))},
                        {"servers", servers}});
  }
  return Json(200, json{{"version", "vsc 0.1.0"}, {"services", services}});
}

void AdminApi::LookupMetrics(std::ostream& o) {
  ServiceRuntime udp, tcp;
  for (ServiceRuntime& r : LookupRuntime()) {
    (r.key.proto == vservice::Proto::kUdp ? udp : tcp) = std::move(r);
  }
  uint64_t connect_failed = 0;
  for (const DestRuntime& d : tcp.dests) connect_failed += d.connect_failures;
  o << "# HELP vsc_datagrams_received_total Lookup datagrams received by the director.\n"
    << "# TYPE vsc_datagrams_received_total counter\n"
    << "vsc_datagrams_received_total " << udp.packets_in << "\n"
    << "# HELP vsc_datagrams_forwarded_total Lookup datagrams forwarded to a real server (dr).\n"
    << "# TYPE vsc_datagrams_forwarded_total counter\n"
    << "vsc_datagrams_forwarded_total " << udp.connections << "\n"
    << "# HELP vsc_datagrams_dropped_total Lookup datagrams dropped, by reason.\n"
    << "# TYPE vsc_datagrams_dropped_total counter\n"
    << "vsc_datagrams_dropped_total{reason=\"malformed\"} " << udp.malformed << "\n"
    << "vsc_datagrams_dropped_total{reason=\"no_server\"} " << udp.no_dest << "\n"
    << "vsc_datagrams_dropped_total{reason=\"too_large\"} " << udp.too_large << "\n"
    << "# HELP vsc_replies_seen_total Replies that passed through the director (0 in dr mode).\n"
    << "# TYPE vsc_replies_seen_total counter\n"
    << "vsc_replies_seen_total " << udp.packets_out << "\n"
    << "# HELP vsc_tcp_connections_total TCP connections accepted by the lookup proxy.\n"
    << "# TYPE vsc_tcp_connections_total counter\n"
    << "vsc_tcp_connections_total " << tcp.connections + tcp.no_dest << "\n"
    << "# HELP vsc_tcp_refused_total TCP lookup connections closed without a server "
       "(no_server), connects to a server that failed and were redispatched (connect_failed).\n"
    << "# TYPE vsc_tcp_refused_total counter\n"
    << "vsc_tcp_refused_total{reason=\"no_server\"} " << tcp.no_dest << "\n"
    << "vsc_tcp_refused_total{reason=\"connect_failed\"} " << connect_failed << "\n";
  o << "# HELP vsc_server_requests_total Requests (UDP) and connections (TCP) sent to a server.\n"
    << "# TYPE vsc_server_requests_total counter\n";
  for (const ServiceRuntime* r : {&udp, &tcp}) {
    for (const DestRuntime& d : r->dests) {
      o << "vsc_server_requests_total{server=\"" << d.server_id << "\",protocol=\""
        << LookupName(r->key.proto) << "\"} " << d.connections << "\n";
    }
  }
}

net::HttpResponse AdminApi::Metrics() {
  std::ostringstream o;
  LookupMetrics(o);
  const ControlCounters& c = control_.counters();
  o << "# HELP vsc_control_dropped_total Control and heartbeat messages dropped, by reason.\n"
    << "# TYPE vsc_control_dropped_total counter\n"
    << "vsc_control_dropped_total{reason=\"malformed\"} " << c.dropped_malformed.Get() << "\n"
    << "vsc_control_dropped_total{reason=\"unauthenticated\"} " << c.dropped_unauthenticated.Get()
    << "\n"
    << "vsc_control_dropped_total{reason=\"replayed\"} " << c.dropped_replayed.Get() << "\n"
    << "vsc_control_dropped_total{reason=\"oversize\"} " << c.dropped_oversize.Get() << "\n"
    << "# HELP vsc_heartbeats_received_total Authenticated heartbeats received.\n"
    << "# TYPE vsc_heartbeats_received_total counter\n"
    << "vsc_heartbeats_received_total " << c.heartbeats_received.Get() << "\n"
    << "# HELP vsc_control_sessions Open real-server control sessions.\n"
    << "# TYPE vsc_control_sessions gauge\n"
    << "vsc_control_sessions " << control_.open_sessions() << "\n"
    << "# HELP vsc_registrations_refused_total Registrations refused.\n"
    << "# TYPE vsc_registrations_refused_total counter\n"
    << "vsc_registrations_refused_total " << c.registrations_refused.Get() << "\n"
    << "# HELP vsc_registration_refusals_total Registrations refused, by reason.\n"
    << "# TYPE vsc_registration_refusals_total counter\n";
  for (const auto& [kind, name] :
       {std::pair{proto::RegisterAck::REFUSAL_INVALID, "invalid"},
        std::pair{proto::RegisterAck::REFUSAL_FULL, "full"},
        std::pair{proto::RegisterAck::REFUSAL_DUPLICATE_ID, "duplicate_id"},
        std::pair{proto::RegisterAck::REFUSAL_REMOVED, "removed"},
        std::pair{proto::RegisterAck::REFUSAL_STANDBY, "standby"}}) {
    o << "vsc_registration_refusals_total{reason=\"" << name << "\"} " << plane_.refusals(kind)
      << "\n";
  }
  const auto& mc = plane_.membership().counters();
  o << "# HELP vsc_membership_transitions_total Real-server state transitions.\n"
    << "# TYPE vsc_membership_transitions_total counter\n";
  for (size_t f = 0; f < membership::kStateCount; ++f) {
    for (size_t t = 0; t < membership::kStateCount; ++t) {
      if (mc.transitions[f][t] == 0) continue;
      o << "vsc_membership_transitions_total{from=\""
        << membership::StateName(static_cast<membership::State>(f)) << "\",to=\""
        << membership::StateName(static_cast<membership::State>(t)) << "\"} "
        << mc.transitions[f][t] << "\n";
    }
  }
  o << "# HELP vsc_heartbeats_ignored_total Heartbeats ignored, by reason.\n"
    << "# TYPE vsc_heartbeats_ignored_total counter\n"
    << "vsc_heartbeats_ignored_total{reason=\"unknown\"} " << mc.heartbeats_unknown << "\n"
    << "vsc_heartbeats_ignored_total{reason=\"stale\"} " << mc.heartbeats_stale << "\n";
  o << "# HELP vsc_server_up 1 when the real server takes new work.\n"
    << "# TYPE vsc_server_up gauge\n";
  auto snapshot = plane_.membership().Snapshot();
  for (const auto& rec : snapshot) {
    o << "vsc_server_up{server=\"" << rec.reg.id << "\",state=\""
      << membership::StateName(rec.state) << "\"} "
      << (membership::AcceptsNewWork(rec.state) ? 1 : 0) << "\n";
  }
  o << "# HELP vsc_server_weight Effective weight.\n# TYPE vsc_server_weight gauge\n";
  for (const auto& rec : snapshot) {
    o << "vsc_server_weight{server=\"" << rec.reg.id << "\"} " << rec.weight << "\n";
  }
  o << "# HELP vsc_server_run_queue Run-queue length reported by the server.\n"
    << "# TYPE vsc_server_run_queue gauge\n";
  for (const auto& rec : snapshot) {
    o << "vsc_server_run_queue{server=\"" << rec.reg.id << "\"} " << rec.load.run_queue << "\n";
  }
  ReplicationMetrics(o);
  for (const auto& render : extra_metrics_) o << render();
  if (services_ != nullptr) WriteServiceMetrics(o, services_->Runtime());
  net::HttpResponse r;
  r.content_type = "text/plain; version=0.0.4";
  r.body = o.str();
  return r;
}

namespace {
constexpr char kReplicationOff[] =
    "replication is off on this director (start it with schema_db, or with an existing log_file)";
}  // namespace

net::HttpResponse AdminApi::Replication() {
  if (replicator_ == nullptr) return Error(409, kReplicationOff);
  ReplicationStatus s = replicator_->GetStatus();
  json replicas = json::array();
  for (const ReplicaInfo& r : s.replicas) {
    const membership::ServerRecord* rec = plane_.membership().Find(r.id);
    replicas.push_back(
        {{"id", r.id},
         {"state", rec != nullptr ? std::string(membership::StateName(rec->state)) : "REMOVED"},
         {"replication", ReplicationStateName(r.state)},
         {"reason", r.reason},
         {"applied_seq", r.applied_seq},
         {"lag", r.lag},
         {"digest", r.digest},
         {"busy", r.busy},
         {"window",
          {{"entries", r.window_entries}, {"bytes", r.window_bytes}, {"fill", r.window_fill}}},
         {"snapshot_peer", r.snapshot_peer},
         {"acks", r.acks},
         {"entries_sent", r.entries_sent}});
  }
  const ReplicatorCounters& c = replicator_->counters();
  return Json(200, json{{"epoch", s.epoch},
                        {"log", {{"first_seq", s.first_seq}, {"last_seq", s.last_seq}}},
                        {"committed_seq", s.committed_seq},
                        {"commit_policy", s.policy},
                        {"update_queue",
                         {{"depth", s.update_queue}, {"capacity", s.update_queue_capacity}}},
                        {"request_queue",
                         {{"depth", reads_ ? reads_->queue_depth() : 0},
                          {"capacity", reads_ ? reads_->queue_capacity() : 0}}},
                        {"pending_decisions", s.pending_decisions},
                        {"write_port", writes_ ? writes_->port() : 0},
                        {"sql_port", reads_ ? reads_->port() : 0},
                        {"writes",
                         {{"accepted", c.writes_accepted.Get()},
                          {"committed", c.writes_committed.Get()},
                          {"failed", c.writes_failed.Get()},
                          {"refused", c.writes_refused.Get()},
                          {"overloaded", c.writes_overloaded.Get()},
                          {"unavailable", c.writes_unavailable.Get()}}},
                        {"batching",
                         {{"group_commits", c.group_commits.Get()},
                          {"entries_sequenced", c.entries_sequenced.Get()},
                          {"replicate_messages", c.replicate_messages.Get()},
                          {"acks", c.acks.Get()}}},
                        {"sequencer",
                         {{"lease_required", s.lease_required},
                          {"sequencing", s.sequencing},
                          {"reason", s.not_sequencing_reason},
                          {"fenced_epoch", s.fenced_epoch},
                          {"promoting", s.promoting},
                          {"promotion", s.promotion},
                          {"fenced_acks", c.fenced_acks.Get()},
                          {"in_sync_record",
                           {{"kept", s.in_sync_recorded_required},
                            {"members", s.in_sync_recorded},
                            {"epoch", s.in_sync_recorded_epoch},
                            {"answers_held", s.answers_held},
                            {"error", s.in_sync_error}}}}},
                        {"replicas", replicas}});
}

net::HttpResponse AdminApi::StartVerify() {
  if (replicator_ == nullptr) return Error(409, kReplicationOff);
  auto seq = replicator_->StartVerify();
  if (!seq.ok()) return Error(409, seq.status().message());
  return Json(200, json{{"seq", *seq}});
}

net::HttpResponse AdminApi::VerifyResult(const std::string& text) {
  if (replicator_ == nullptr) return Error(409, kReplicationOff);
  uint64_t seq = 0;
  try {
    size_t used = 0;
    seq = std::stoull(text, &used);
    if (used != text.size()) throw std::invalid_argument(text);
  } catch (const std::exception&) {
    return Error(400, "'" + text + "' is not a seq; use the seq POST /v1/verify returned");
  }
  auto rep = replicator_->Verify(seq);
  if (!rep)
    return Error(404, "no verification at seq " + std::to_string(seq) + " (kept: the last 32)");
  json replicas = json::array();
  for (const VerifyReplica& r : rep->replicas) {
    replicas.push_back({{"id", r.id}, {"checksum", r.checksum}, {"status", r.status}});
  }
  return Json(200, json{{"seq", rep->seq},
                        {"complete", rep->complete},
                        {"ok", rep->ok},
                        {"expected", rep->expected},
                        {"elapsed_ms", rep->elapsed_ms},
                        {"replicas", replicas}});
}

void AdminApi::ReplicationMetrics(std::ostream& o) {
  if (replicator_ == nullptr) return;
  ReplicationStatus s = replicator_->GetStatus();
  const ReplicatorCounters& c = replicator_->counters();
  o << "# HELP vsc_replication_last_seq Last sequenced write.\n"
    << "# TYPE vsc_replication_last_seq gauge\n"
    << "vsc_replication_last_seq " << s.last_seq << "\n"
    << "# HELP vsc_replication_committed_seq Last write whose commit policy was met.\n"
    << "# TYPE vsc_replication_committed_seq gauge\n"
    << "vsc_replication_committed_seq " << s.committed_seq << "\n"
    << "# HELP vsc_replication_log_first_seq Oldest entry the log holds.\n"
    << "# TYPE vsc_replication_log_first_seq gauge\n"
    << "vsc_replication_log_first_seq " << s.first_seq << "\n"
    << "# HELP vsc_writes_total Writes by outcome.\n"
    << "# TYPE vsc_writes_total counter\n"
    << "vsc_writes_total{outcome=\"committed\"} " << c.writes_committed.Get() << "\n"
    << "vsc_writes_total{outcome=\"failed\"} " << c.writes_failed.Get() << "\n"
    << "vsc_writes_total{outcome=\"refused\"} " << c.writes_refused.Get() << "\n"
    << "vsc_writes_total{outcome=\"overloaded\"} " << c.writes_overloaded.Get() << "\n"
    << "vsc_writes_total{outcome=\"unavailable\"} " << c.writes_unavailable.Get() << "\n"
    << "# HELP vsc_replication_group_commits_total Log appends (one per event-loop turn).\n"
    << "# TYPE vsc_replication_group_commits_total counter\n"
    << "vsc_replication_group_commits_total " << c.group_commits.Get() << "\n"
    << "# HELP vsc_replication_divergences_total Replicas marked DIVERGED.\n"
    << "# TYPE vsc_replication_divergences_total counter\n"
    << "vsc_replication_divergences_total " << c.divergences.Get() << "\n"
    << "# HELP vsc_replication_snapshots_ordered_total InstallSnapshot orders sent.\n"
    << "# TYPE vsc_replication_snapshots_ordered_total counter\n"
    << "vsc_replication_snapshots_ordered_total " << c.snapshots_ordered.Get() << "\n"
    << "# HELP vsc_replica_busy_total Times a replica's window filled up (BUSY).\n"
    << "# TYPE vsc_replica_busy_total counter\n"
    << "vsc_replica_busy_total " << c.busy_events.Get() << "\n"
    << "# HELP vsc_sequencing 1 while this director sequences writes (under etcd: holds the "
       "sequencer lease).\n"
    << "# TYPE vsc_sequencing gauge\n"
    << "vsc_sequencing " << (s.sequencing ? 1 : 0) << "\n"
    << "# HELP vsc_replication_epoch The epoch writes are sequenced under.\n"
    << "# TYPE vsc_replication_epoch gauge\n"
    << "vsc_replication_epoch " << s.epoch << "\n"
    << "# HELP vsc_replication_fenced_acks_total Replicas that refused our stream (newer epoch).\n"
    << "# TYPE vsc_replication_fenced_acks_total counter\n"
    << "vsc_replication_fenced_acks_total " << c.fenced_acks.Get() << "\n"
    << "# HELP vsc_queue_depth Requests waiting on the director, by queue.\n"
    << "# TYPE vsc_queue_depth gauge\n"
    << "vsc_queue_depth{queue=\"update\"} " << s.update_queue << "\n"
    << "vsc_queue_depth{queue=\"request\"} " << (reads_ ? reads_->queue_depth() : 0) << "\n";
  o << "# HELP vsc_replica_applied_seq Last seq a replica acknowledged.\n"
    << "# TYPE vsc_replica_applied_seq gauge\n";
  for (const ReplicaInfo& r : s.replicas) {
    o << "vsc_replica_applied_seq{server=\"" << r.id << "\",replication=\""
      << ReplicationStateName(r.state) << "\"} " << r.applied_seq << "\n";
  }
  o << "# HELP vsc_replica_window_fill Fill of a replica's in-flight window (0..1).\n"
    << "# TYPE vsc_replica_window_fill gauge\n";
  for (const ReplicaInfo& r : s.replicas) {
    o << "vsc_replica_window_fill{server=\"" << r.id << "\"} " << r.window_fill << "\n";
  }
  if (reads_ != nullptr) {
    const ReadRouterCounters& rc = reads_->counters();
    o << "# HELP vsc_sql_reads_total SQL reads on the read port, by outcome.\n"
      << "# TYPE vsc_sql_reads_total counter\n"
      << "vsc_sql_reads_total{outcome=\"forwarded\"} " << rc.forwarded.Get() << "\n"
      << "vsc_sql_reads_total{outcome=\"overloaded\"} " << rc.refused_overload.Get() << "\n"
      << "vsc_sql_reads_total{outcome=\"timeout\"} " << rc.timed_out.Get() << "\n"
      << "vsc_sql_reads_total{outcome=\"bad_min_seq\"} " << rc.refused_min_seq.Get() << "\n"
      << "vsc_sql_reads_total{outcome=\"malformed\"} " << rc.dropped_malformed.Get() << "\n"
      << "vsc_sql_reads_total{outcome=\"unauthenticated\"} " << rc.dropped_unauthenticated.Get()
      << "\n";
  }
  if (writes_ != nullptr) {
    const WriteServerCounters& wc = writes_->counters();
    o << "# HELP vsc_write_sessions Open writer sessions.\n"
      << "# TYPE vsc_write_sessions gauge\n"
      << "vsc_write_sessions " << writes_->open_sessions() << "\n"
      << "# HELP vsc_write_dropped_total Write-port messages dropped (session closed), by reason.\n"
      << "# TYPE vsc_write_dropped_total counter\n"
      << "vsc_write_dropped_total{reason=\"malformed\"} " << wc.dropped_malformed.Get() << "\n"
      << "vsc_write_dropped_total{reason=\"unauthenticated\"} " << wc.dropped_unauthenticated.Get()
      << "\n"
      << "vsc_write_dropped_total{reason=\"replayed\"} " << wc.dropped_replayed.Get() << "\n"
      << "vsc_write_dropped_total{reason=\"oversize\"} " << wc.dropped_oversize.Get() << "\n";
  }
}

}  // namespace vsc::director
