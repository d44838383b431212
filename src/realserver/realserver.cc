#include "realserver/realserver.h"

#include <fmt/ranges.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>

#include <cerrno>
#include <future>
#include <sstream>

#include "common/ready_file.h"
#include "common/signals.h"
#include "net/endpoint.h"
#include "realserver/fronted_service.h"
#include "realserver/replication_wire.h"
#include "realserver/snapshot.h"
#include "replication/mirror.h"

namespace vsc::realserver {
namespace {

Result<std::vector<asio::ip::address>> ParseAddressList(const std::string& text) {
  std::vector<asio::ip::address> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    asio::error_code ec;
    auto a = asio::ip::make_address(item, ec);
    if (ec) {
      return InvalidArgument(
          "trusted_forwarders: '" + item +
          "' is not an IP address; write IPv4 or IPv6 addresses, comma-separated");
    }
    out.push_back(a);
  }
  return out;
}

}  // namespace

relay::RelayOptions RelayOptionsOf(const RealServerConfig& c) {
  relay::RelayOptions o;
  o.name = c.id;
  o.listen = c.listen;
  o.port = c.relay_port;
  o.max_connections = c.relay_max_connections;
  o.rate = c.relay_rate;
  o.burst = std::max(1.0, c.relay_rate / 4.0);
  o.groups.max_groups = c.relay_max_groups;
  o.groups.max_subscribers = c.relay_max_subscribers;
  o.groups.buffer.max_clips = c.relay_buffer_clips;
  o.groups.buffer.max_bytes = c.relay_buffer_bytes;
  return o;
}

// The directors' control endpoints, in the configured order.
Result<std::vector<asio::ip::tcp::endpoint>> ParseDirectors(const RealServerConfig& c) {
  std::vector<asio::ip::tcp::endpoint> out;
  for (const std::string& a : c.DirectorAddresses()) {
    auto d = net::ParseTcpEndpoint(a);
    if (!d.ok()) return d.status().Annotate("director");
    out.push_back(*d);
  }
  return out;
}

Status ValidateConfig(const RealServerConfig& c) {
  if (c.id.empty()) return InvalidArgument("id is required: give each real server a unique name");
  if (c.id.size() > 64) return InvalidArgument("id is longer than 64 bytes");
  if (c.weight > 65535) return InvalidArgument("weight must be 0 to 65535");
  if (c.workers == 0) return InvalidArgument("workers must be at least 1");
  asio::error_code ec;
  asio::ip::make_address(c.listen, ec);
  if (ec) return InvalidArgument("listen '" + c.listen + "' is not an IPv4 or IPv6 address");
  if (c.director.empty()) return InvalidArgument("director: give at least one director host");
  if (auto d = ParseDirectors(c); !d.ok()) return d.status();
  if (auto t = ParseAddressList(c.trusted_forwarders); !t.ok()) return t.status();
  if (c.synchronous != "NORMAL" && c.synchronous != "FULL") {
    return InvalidArgument("synchronous must be NORMAL or FULL, not '" + c.synchronous + "'");
  }
  if (c.apply_batch == 0) return InvalidArgument("apply_batch must be at least 1");
  if (c.snapshot_timeout_ms == 0) return InvalidArgument("snapshot_timeout_ms must be at least 1");
  if (auto s = ParseFrontedServices(c.service); !s.ok()) return s.status();
  return Status::Ok();
}

Status CheckDatabaseFile(const RealServerConfig& c) {
  if (c.create_db) return Status::Ok();
  struct stat st {};
  if (::stat(c.db.c_str(), &st) == 0) return Status::Ok();
  if (errno != ENOENT) return ErrnoStatus("database " + c.db, errno);
  return NotFound("database " + c.db +
                  " does not exist (a mistyped --db?); give this server its own copy of the "
                  "resource database (cp resources.db " +
                  c.id + ".db, or vsc loaddb --out " + c.db +
                  "), or --create-db to start with an empty one that the director "
                  "fills with a snapshot from a peer");
}

RealServer::RealServer(RealServerConfig config, proto::ClusterKey key, const Clock& clock)
    : config_(std::move(config)), key_(std::move(key)), clock_(clock), pool_(config_.workers) {}

RealServer::~RealServer() { Stop(); }

// Start runs in an order that makes a failed start harmless, as the director's does: validate,
// lock the database, bind every socket, and only then open the database as a replica (which
// writes its replication state into it). A port in use or a second server on the file leaves
// the database as it was.
Status RealServer::Start() {
  VSC_RETURN_IF_ERROR(ValidateConfig(config_));
  VSC_RETURN_IF_ERROR(CheckDatabaseFile(config_));
  VSC_ASSIGN_OR_RETURN(auto directors, ParseDirectors(config_));
  VSC_ASSIGN_OR_RETURN(auto trusted, ParseAddressList(config_.trusted_forwarders));
  VSC_ASSIGN_OR_RETURN(run_queue_, RunQueueSource::Open(config_.load_cgroup));
  if (trusted.empty()) {
    for (const auto& d : directors) trusted.push_back(d.address());
  }

  VSC_ASSIGN_OR_RETURN(FileLock lock, Replica::Lock(config_.db));
  if (Status s = BindServices(trusted); !s.ok()) {
    lock.Abandon();  // nothing written: leave the disk as it was
    return s;
  }
  VSC_RETURN_IF_ERROR(OpenReplica(std::move(lock)));
  StartAgent(std::move(directors));
  started_ = true;
  serving_ = true;  // agent_, replica_ and every service exist from here on
  if (!config_.ready_file.empty()) {
    VSC_RETURN_IF_ERROR(
        WriteReadyFile(config_.ready_file, {{"lookup_port", std::to_string(lookup_port_)},
                                            {"http_port", std::to_string(http_port_)},
                                            {"sql_port", std::to_string(sql_port_)},
                                            {"relay_port", std::to_string(relay_port())},
                                            {"sql_tcp_port", std::to_string(sql_tcp_port_)}}));
  }
  spdlog::info(
      "real server {} up: lookup {}:{} (udp, tcp), http {}:{}, sql {}:{} (udp), db {} at seq {}, "
      "director {}",
      config_.id, config_.listen, lookup_port_, config_.listen, http_port_, config_.listen,
      sql_port_, config_.db, replica_->applied_seq(), fmt::join(config_.DirectorAddresses(), ", "));
  return Status::Ok();
}

Status RealServer::BindServices(const std::vector<asio::ip::address>& trusted) {
  const auto address = asio::ip::make_address(config_.listen);
  uint16_t lookup_port = config_.lookup_port;
  uint16_t http_port = config_.http_port;
  uint16_t sql_port = config_.sql_port;
  uint16_t sql_tcp_port = config_.sql_port;  // TCP beside UDP, as for lookups
  // A peer's fetch waits as long for a read as this server waits for a send.
  snapshots_ = std::make_unique<SnapshotServer>(
      config_.db, SnapshotToken(key_), std::chrono::milliseconds(config_.snapshot_timeout_ms));
  snapshots_->Start();
  SnapshotServer* snapshots = snapshots_.get();
  for (size_t i = 0; i < pool_.size(); ++i) {
    // No reader yet: the workers do not run before OpenReplica has opened them.
    services_.push_back(
        std::make_unique<LookupService>(pool_.context(i), clock_, std::nullopt, load_, trusted));
    services_.back()->SetMetricsHandler([this] { return RenderMetrics(); });
    services_.back()->SetSnapshotHandler(
        [snapshots](const net::HttpRequest& r) { return snapshots->Handle(r); });
    VSC_RETURN_IF_ERROR(services_.back()->Start(address, lookup_port, http_port));
    lookup_port = services_.back()->lookup_port();
    http_port = services_.back()->http_port();
    sql_services_.push_back(std::make_unique<SqlService>(pool_.context(i), config_.id, key_,
                                                         trusted, config_.db, clock_.WallMicros()));
    VSC_RETURN_IF_ERROR(sql_services_.back()->Start(address, sql_port, sql_tcp_port));
    sql_port = sql_services_.back()->port();
    sql_tcp_port = sql_services_.back()->tcp_port();
  }
  lookup_port_ = lookup_port;
  http_port_ = http_port;
  sql_port_ = sql_port;
  sql_tcp_port_ = sql_tcp_port;
  if (config_.relay) {  // bound with the other ports, before the database is opened
    relay_ = std::make_unique<relay::RelayNode>(pool_, RelayOptionsOf(config_), key_, clock_);
    VSC_RETURN_IF_ERROR(relay_->Start());
  }
  return Status::Ok();
}

Status RealServer::OpenReplica(FileLock lock) {
  // The replica first: it is the database's one writer and creates the replication state.
  ReplicaOptions ro;
  ro.path = config_.db;
  ro.store.synchronous = config_.synchronous;
  ro.max_batch = config_.apply_batch;
  ro.apply_interval = std::chrono::milliseconds(config_.apply_interval_ms);
  ro.clock = &clock_;
  ro.snapshot_token = SnapshotToken(key_);
  ro.snapshot_timeout = std::chrono::milliseconds(config_.snapshot_timeout_ms);
  ReplicaHooks hooks;
  hooks.on_ack = [this](uint64_t session, proto::ReplicaAck ack) {
    proto::Message m;
    *m.mutable_replica_ack() = std::move(ack);
    agent_->Send(session, std::move(m));
  };
  hooks.close_readers = [this] { CloseReaders(); };
  hooks.reopen_readers = [this] { ReopenReaders(); };
  VSC_ASSIGN_OR_RETURN(replica_, Replica::Open(ro, std::move(hooks), std::move(lock)));
  // The workers do not run yet, so their readers open from this thread.
  for (size_t i = 0; i < pool_.size(); ++i) {
    if (Status s = services_[i]->ReopenReader(config_.db); !s.ok()) {
      if (s.code() != Code::kInvalidArgument) return s;
      // A new server with an empty database: it serves lookups once a snapshot brought the data.
      if (i == 0) spdlog::warn("{}; lookups fail until a snapshot installs the data", s.message());
    }
    VSC_RETURN_IF_ERROR(sql_services_[i]->ReopenReader());
  }
  return Status::Ok();
}

void RealServer::StartAgent(std::vector<asio::ip::tcp::endpoint> directors) {
  AgentOptions options;
  options.id = config_.id;
  options.directors = std::move(directors);
  options.weight = config_.weight;
  options.incarnation = static_cast<uint64_t>(clock_.WallMicros());
  options.run_queue = run_queue_;
  auto add = [&](const char* service, uint16_t port) {
    proto::Endpoint e;
    e.set_service(service);
    e.set_host(config_.listen);
    e.set_port(port);
    options.endpoints.push_back(e);
  };
  add("lookup-udp", lookup_port_);
  add("lookup-tcp", lookup_port_);
  add("http", http_port_);
  add("sql-udp", sql_port_);
  add("sql-tcp", sql_tcp_port_);
  const auto fronted = ParseFrontedServices(config_.service);  // validated at Start
  for (const FrontedService& s : *fronted) options.endpoints.push_back(ToEndpoint(s));
  options.capabilities = {"lookup", "sql"};
  if (relay_) {
    add("relay", relay_->port());
    options.capabilities.push_back("relay");
    options.on_ring_table = [this](const std::string& table) {
      const auto* p = reinterpret_cast<const uint8_t*>(table.data());
      if (Status s = relay_->SetTable(std::span<const uint8_t>(p, table.size())); !s.ok()) {
        spdlog::error("{}", s.ToString());
      }
    };
  }
  Replica* replica = replica_.get();
  options.position = [replica] { return replica->position(); };
  options.schema = [replica] {
    auto ddl = replication::SchemaMirror::ReadSchema(replica->path());
    if (!ddl.ok())
      spdlog::warn("reading the schema for the registration: {}", ddl.status().ToString());
    return ddl.ok() ? std::move(ddl).value() : std::vector<std::string>{};
  };
  options.on_replicate = [this](uint64_t session, proto::Replicate message) {
    if (session == install_session_) return;  // a snapshot replaces this stream
    replica_->Submit(session, std::move(message));
  };
  options.on_install_snapshot = [this](uint64_t session, const proto::InstallSnapshot& in) {
    install_session_ = session;
    SnapshotSource src{in.peer_id(), in.host(), static_cast<uint16_t>(in.http_port()), in.reason(),
                       in.epoch()};
    replica_->InstallSnapshot(
        std::move(src), [this, session, peer = in.peer_id(), epoch = in.epoch()](Status s) {
          if (!s.ok()) {
            proto::Message m;
            *m.mutable_replica_ack() =
                MakeAck({}, {}, "snapshot from " + peer + " failed: " + s.message());
            const ReplicaPosition p = replica_->position();
            m.mutable_replica_ack()->set_applied_seq(p.applied_seq);
            m.mutable_replica_ack()->set_digest(DigestBytes(p.digest));
            if (epoch < p.fence_epoch) m.mutable_replica_ack()->set_fence_epoch(p.fence_epoch);
            agent_->Send(session, std::move(m));
          }
          // Register again either way, so the director sees the position as it now is.
          agent_->CloseSession(session);
        });
  };
  options.on_session_lost = [replica] { replica->DropPending(); };
  options.on_exit = [this](int code, const std::string& why) {
    exit_reason_ = why;
    exit_code_ = code;     // after the reason: RunUntilSignal reads the code, then the reason
    RequestTermination();  // RunUntilSignal returns and the process leaves with `code`
  };
  agent_ = std::make_unique<Agent>(control_io_, options, key_, clock_, load_);
  control_guard_ = std::make_unique<asio::executor_work_guard<asio::io_context::executor_type>>(
      control_io_.get_executor());
  pool_.Start();
  control_thread_ = std::thread([this] { control_io_.run(); });
  // Register only once the replica knows its position (a fresh one checksums its content).
  replica_->Start([this] { asio::post(control_io_, [this] { agent_->Start(); }); });
}

void RealServer::OnEveryWorker(const std::function<void(size_t)>& f) {
  std::vector<std::future<void>> done;
  for (size_t i = 0; i < pool_.size(); ++i) {
    auto p = std::make_shared<std::promise<void>>();
    done.push_back(p->get_future());
    pool_.Post(i, [f, i, p] {
      f(i);
      p->set_value();
    });
  }
  for (auto& d : done) d.wait();
}

void RealServer::CloseReaders() {
  OnEveryWorker([this](size_t i) {
    services_[i]->CloseReader();
    sql_services_[i]->CloseReader();
  });
}

void RealServer::ReopenReaders() {
  OnEveryWorker([this](size_t i) {
    if (Status s = services_[i]->ReopenReader(config_.db); !s.ok()) {
      spdlog::error("worker {}: {}", i, s.ToString());
    }
    if (Status s = sql_services_[i]->ReopenReader(); !s.ok()) {
      spdlog::error("worker {}: {}", i, s.ToString());
    }
  });
}

void RealServer::Stop() {
  if (!started_) return;
  started_ = false;
  agent_->Stop();
  // Before the workers stop: an install in progress waits for them to close their readers.
  replica_->Stop();
  for (size_t i = 0; i < pool_.size(); ++i) {
    LookupService* s = services_[i].get();
    SqlService* q = sql_services_[i].get();
    pool_.Post(i, [s, q] {
      s->Stop();
      q->Stop();
    });
  }
  if (relay_) relay_->Stop();
  control_guard_.reset();
  control_io_.stop();
  if (control_thread_.joinable()) control_thread_.join();
  pool_.Stop();
  pool_.Join();
  if (snapshots_) snapshots_->Stop();  // after the workers: none hands a connection over now
  spdlog::info("real server {} stopped", config_.id);
}

std::string RealServer::RenderMetrics() const {
  if (!serving_) return "";
  uint64_t requests = 0, lookups = 0, not_found = 0, forwarded = 0, malformed = 0, untrusted = 0,
           truncated = 0, errors = 0, tcp = 0, http = 0;
  for (const auto& s : services_) {
    const ServiceCounters& c = s->counters();
    requests += c.requests.Get();
    lookups += c.lookups.Get();
    not_found += c.not_found.Get();
    forwarded += c.forwarded.Get();
    malformed += c.dropped_malformed.Get();
    untrusted += c.dropped_untrusted.Get();
    truncated += c.dropped_truncated.Get();
    errors += c.errors.Get();
    tcp += c.tcp_sessions.Get();
    http += c.http_requests.Get();
  }
  uint64_t reads = 0, reads_refused = 0, sql_malformed = 0, sql_unauth = 0, sql_untrusted = 0;
  for (const auto& s : sql_services_) {
    const SqlCounters& c = s->counters();
    reads += c.requests.Get();
    reads_refused += c.refused.Get();
    sql_malformed += c.dropped_malformed.Get();
    sql_unauth += c.dropped_unauthenticated.Get();
    sql_untrusted += c.dropped_untrusted.Get();
  }
  std::string o;
  auto metric = [&o](const char* name, const char* type, const char* help) {
    o += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
  };
  auto line = [&o](const std::string& name, uint64_t v) {
    o += name + " " + std::to_string(v) + "\n";
  };
  metric("vsc_rs_lookup_requests_total", "counter", "Lookup requests answered (UDP, TCP, HTTP).");
  line("vsc_rs_lookup_requests_total", requests);
  metric("vsc_rs_lookups_total", "counter", "Ids looked up, and of those not found.");
  line("vsc_rs_lookups_total{result=\"any\"}", lookups);
  line("vsc_rs_lookups_total{result=\"not_found\"}", not_found);
  metric("vsc_rs_forwarded_total", "counter", "Requests that came from the director (dr).");
  line("vsc_rs_forwarded_total", forwarded);
  metric("vsc_rs_dropped_total", "counter", "Datagrams and frames dropped, by reason.");
  line("vsc_rs_dropped_total{reason=\"malformed\"}", malformed);
  line("vsc_rs_dropped_total{reason=\"untrusted_forwarder\"}", untrusted);
  line("vsc_rs_dropped_total{reason=\"truncated\"}", truncated);
  line("vsc_rs_dropped_total{reason=\"sql_malformed\"}", sql_malformed);
  line("vsc_rs_dropped_total{reason=\"sql_unauthenticated\"}", sql_unauth);
  line("vsc_rs_dropped_total{reason=\"sql_untrusted_forwarder\"}", sql_untrusted);
  metric("vsc_rs_errors_total", "counter", "Store errors answered with status internal.");
  line("vsc_rs_errors_total", errors);
  metric("vsc_rs_sessions_total", "counter", "TCP lookup sessions and HTTP requests.");
  line("vsc_rs_sessions_total{kind=\"tcp\"}", tcp);
  line("vsc_rs_sessions_total{kind=\"http\"}", http);
  metric("vsc_rs_sql_reads_total", "counter", "SQL reads answered, and of those refused.");
  line("vsc_rs_sql_reads_total{result=\"any\"}", reads);
  line("vsc_rs_sql_reads_total{result=\"refused\"}", reads_refused);
  metric("vsc_rs_in_flight", "gauge", "Requests being served.");
  line("vsc_rs_in_flight", load_.in_flight());
  if (replica_) {
    metric("vsc_rs_applied_seq", "gauge", "Last replicated write applied here.");
    line("vsc_rs_applied_seq", replica_->applied_seq());
    const ReplicaPosition pos = replica_->position();
    metric("vsc_rs_fence_epoch", "gauge", "Newest director epoch seen; older ones are refused.");
    line("vsc_rs_fence_epoch", pos.fence_epoch);
    metric("vsc_rs_fenced_total", "counter",
           "Replicate and snapshot orders refused: sent under an epoch older than the fence.");
    line("vsc_rs_fenced_total", pos.fenced_refusals);
  }
  if (agent_) {
    const AgentCounters& a = agent_->counters();
    metric("vsc_rs_agent_total", "counter", "Agent events.");
    line("vsc_rs_agent_total{event=\"registration\"}", a.registrations.Get());
    line("vsc_rs_agent_total{event=\"refusal\"}", a.refusals.Get());
    line("vsc_rs_agent_total{event=\"standby_refusal\"}", a.standby_refusals.Get());
    line("vsc_rs_agent_total{event=\"session_lost\"}", a.sessions_lost.Get());
    line("vsc_rs_agent_total{event=\"heartbeat\"}", a.heartbeats_sent.Get());
  }
  if (relay_) o += relay_->RenderMetrics();
  return o;
}

int RealServer::RunUntilSignal() {
  int sig = WaitForTerminationSignal();
  if (exit_code_.load() < 0) spdlog::info("signal {} received, leaving the cluster", sig);
  Stop();
  const int code = exit_code_.load();
  if (code >= 0) spdlog::info("exiting with code {}: {}", code, exit_reason_);
  return code < 0 ? 0 : code;
}

}  // namespace vsc::realserver
