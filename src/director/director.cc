#include "director/director.h"

#include <fmt/ranges.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <filesystem>

#include "common/file_checks.h"
#include "common/ready_file.h"
#include "common/signals.h"
#include "director/default_services.h"
#include "director/etcd_client.h"
#include "membership/membership.h"
#include "net/endpoint.h"
#include "net/port_pair.h"
#include "net/tls_context.h"
#include "proto/lookup_codec.h"
#include "sched/scheduler.h"

namespace vsc::director {

Status ValidateConfig(const DirectorConfig& c) {
  if (auto s = sched::MakeScheduler(c.scheduler); !s.ok()) return s.status();
  if (auto m = LookupPersistencePrefix(c); !m.ok()) return m.status();
  membership::Config mc;
  mc.heartbeat_interval = std::chrono::milliseconds(c.heartbeat_interval_ms);
  mc.silent_after = static_cast<int>(c.silent_after);
  mc.down_after = static_cast<int>(c.down_after);
  VSC_RETURN_IF_ERROR(membership::ValidateConfig(mc));
  if (c.max_servers == 0 || c.max_servers > 65536) {
    return InvalidArgument("max_servers must be 1 to 65536");
  }
  asio::error_code ec;
  asio::ip::make_address(c.listen, ec);
  if (ec) return InvalidArgument("listen '" + c.listen + "' is not an IPv4 or IPv6 address");
  asio::ip::make_address(c.admin_listen, ec);
  if (ec) {
    return InvalidArgument("admin_listen '" + c.admin_listen + "' is not an IPv4 or IPv6 address");
  }
  const auto http = asio::ip::make_address(c.http_listen, ec);
  if (ec) {
    return InvalidArgument("http_listen '" + c.http_listen + "' is not an IPv4 or IPv6 address");
  }
  if (!http.is_loopback() && c.http_auth.empty()) {
    return InvalidArgument("http_listen " + c.http_listen +
                           " is not loopback: set http_auth to an rqlite users file (JSON: "
                           "[{\"username\", \"password\", \"perms\"}]) so the HTTP API "
                           "needs a login");
  }
  if (c.http_cert.empty() != c.http_key.empty()) {
    return InvalidArgument(
        "http_cert and http_key go together: set both for HTTPS on http_port, or neither");
  }
  if (auto p = replication::ParseCommitPolicy(c.commit_policy); !p.ok()) return p.status();
  if (c.replica_window_entries == 0 || c.replica_window_bytes <= 0) {
    return InvalidArgument("replica_window_entries and replica_window_bytes must be above 0");
  }
  if (c.update_queue == 0 || c.request_queue == 0) {
    return InvalidArgument("update_queue and request_queue must be at least 1");
  }
  if (c.update_queue_bytes < static_cast<int64_t>(kMaxWritePayload)) {
    return InvalidArgument("update_queue_bytes must be at least " +
                           std::to_string(kMaxWritePayload) +
                           " (one write of the largest size); the default is 268435456");
  }
  if (c.nat_connect_timeout_ms == 0 || c.tcp_timeout_s == 0 || c.tcpfin_timeout_s == 0 ||
      c.udp_session_timeout_s == 0) {
    return InvalidArgument(
        "nat_connect_timeout_ms, tcp_timeout_s, tcpfin_timeout_s and udp_session_timeout_s must "
        "be above 0");
  }
  if (c.log_retain_entries == 0 || c.log_retain_bytes <= 0) {
    return InvalidArgument("log_retain_entries and log_retain_bytes must be above 0");
  }
  return ValidateLeaseConfig(c);
}

Status ValidateLeaseConfig(const DirectorConfig& c) {
  for (const std::string& e : c.etcd_endpoints) {
    if (auto ep = ParseEtcdEndpoint(e); !ep.ok()) return ep.status();
  }
  if (c.cluster_name.empty() || c.cluster_name.find('/') != std::string::npos) {
    return InvalidArgument("cluster_name '" + c.cluster_name +
                           "' must be a non-empty name without '/' (it names /vscluster/<name>/ "
                           "in etcd)");
  }
  if (c.sequencer_lease_ttl_ms < 1000) {
    return InvalidArgument(
        "sequencer_lease_ttl_ms must be at least 1000 (etcd counts whole "
        "seconds); the default is 3000");
  }
  if (c.etcd_timeout_ms == 0 || c.etcd_timeout_ms * 3 > c.sequencer_lease_ttl_ms) {
    return InvalidArgument(
        "etcd_timeout_ms must be above 0 and at most a third of "
        "sequencer_lease_ttl_ms (" +
        std::to_string(c.sequencer_lease_ttl_ms) +
        "), so a keepalive can be retried within the TTL");
  }
  if (c.service_table_poll_ms == 0) {
    return InvalidArgument("service_table_poll_ms must be above 0; the default is 200");
  }
  return Status::Ok();
}

bool ReplicationWanted(const DirectorConfig& c) {
  std::error_code ec;
  return !c.schema_db.empty() || std::filesystem::exists(c.log_file, ec);
}

Status CheckStartFiles(const DirectorConfig& c) {
  if (ReplicationWanted(c)) {
    std::error_code ec;
    if (!std::filesystem::exists(c.log_file, ec)) {
      VSC_RETURN_IF_ERROR(CheckReadable(c.schema_db, "schema_db")
                              .Annotate("a new replication log needs the database every replica "
                                        "starts from (vsc loaddb --out FILE builds one)"));
      VSC_RETURN_IF_ERROR(CheckCanCreate(c.log_file, "log_file"));
    }
  }
  if (!c.ready_file.empty()) VSC_RETURN_IF_ERROR(CheckCanCreate(c.ready_file, "ready_file"));
  return Status::Ok();
}

Director::Director(DirectorConfig config, proto::ClusterKey key, std::string admin_token,
                   const Clock& clock)
    : config_(std::move(config)),
      key_(std::move(key)),
      admin_token_(std::move(admin_token)),
      clock_(clock),
      pool_(config_.workers) {}

Director::~Director() { Stop(); }

Status Director::Start(const std::function<Status()>& after_bind) {
  VSC_RETURN_IF_ERROR(ValidateConfig(config_));
  VSC_RETURN_IF_ERROR(CheckStartFiles(config_));
  if (!config_.http_cert.empty()) {
    VSC_ASSIGN_OR_RETURN(http_tls_, net::TlsServerContext::Load(config_.http_cert, config_.http_key,
                                                                "http_cert", "http_key"));
  }
  const bool replication = ReplicationWanted(config_);
  if (!replication && !config_.etcd_endpoints.empty()) {
    return InvalidArgument(
        "etcd_endpoints is set but replication is off (no schema_db and no "
        "log at " +
        config_.log_file +
        "): the etcd lease fences the write sequencer; set schema_db, or "
        "leave etcd_endpoints out");
  }
  if (replication) {
    auto lock = FileLock::Acquire(
        config_.log_file, "replication log",
        "another director runs on it: stop that one, or start this one in its own directory "
        "(or with its own --log-file)");
    if (!lock.ok()) return lock.status();
    log_lock_.emplace(std::move(lock).value());
  }
  if (Status s = Bind(replication); !s.ok()) {
    if (log_lock_) log_lock_->Abandon();  // nothing written: leave the disk as it was
    log_lock_.reset();
    return s;
  }
  // Every socket is bound: from here on start-up writes files.
  if (replication) {
    VSC_RETURN_IF_ERROR(StartReplication());
  } else {
    spdlog::info("replication off: no schema_db and no log at {}", config_.log_file);
  }
  StartSqlHttp();
  if (after_bind) VSC_RETURN_IF_ERROR(after_bind());
  rate_timer_ = std::make_unique<asio::steady_timer>(control_io_);
  ArmRateTimer();

  pool_.Start();
  control_thread_ = std::thread([this] { control_io_.run(); });
  started_ = true;
  if (!config_.ready_file.empty()) {
    std::vector<std::pair<std::string, std::string>> ports = {
        {"lookup_port", std::to_string(lookup_port_)},
        {"control_port", std::to_string(control_port())},
        {"heartbeat_port", std::to_string(heartbeat_port())},
        {"admin_port", std::to_string(admin_port())},
        {"ring_port", std::to_string(ring_port_->port())},
        {"http_port", std::to_string(http_port())}};
    if (state_sync_) ports.emplace_back("sync_port", std::to_string(state_sync_->port()));
    if (replicator_) {
      ports.emplace_back("write_port", std::to_string(write_port()));
      ports.emplace_back("sql_port", std::to_string(sql_port()));
    }
    if (Status s = WriteReadyFile(config_.ready_file, ports); !s.ok()) {
      Stop();
      return s;
    }
  }
  spdlog::info(
      "director up: lookup {} (udp dr, tcp proxy), control {}, heartbeat {}, admin {}, "
      "{} workers, scheduler {}",
      net::HostPort(config_.listen, lookup_port_), control_port(), heartbeat_port(),
      net::HostPort(config_.admin_listen, admin_port()), pool_.size(), config_.scheduler);
  return Status::Ok();
}

Status Director::Bind(bool replication) {
  membership::Config mc;
  mc.heartbeat_interval = std::chrono::milliseconds(config_.heartbeat_interval_ms);
  mc.silent_after = static_cast<int>(config_.silent_after);
  mc.down_after = static_cast<int>(config_.down_after);
  ControlSettings settings;
  settings.max_servers = config_.max_servers;
  plane_ = std::make_unique<ControlPlane>(mc, settings);
  control_ = std::make_unique<ControlServer>(control_io_, *plane_, key_, clock_,
                                             [this](ViewPtr v) { Publish(std::move(v)); });
  // Ring versions start at the start time in ms, so a restarted director's stay above its old.
  ring_router_ = std::make_unique<RingRouter>(static_cast<uint64_t>(clock_.WallMicros() / 1000));
  control_->SetRingRouter(ring_router_.get());

  const auto vip = asio::ip::make_address(config_.listen);
  EngineOptions::LookupSockets lookup;
  VSC_RETURN_IF_ERROR(BindLookup(vip, lookup));
  VSC_RETURN_IF_ERROR(StartServices(std::move(lookup)));
  // The control server's sessions run only once the control thread does (after Start has
  // given it the replicator), so it may bind and arm now.
  VSC_RETURN_IF_ERROR(control_->Start(asio::ip::tcp::endpoint(vip, config_.control_port),
                                      asio::ip::udp::endpoint(vip, config_.heartbeat_port)));
  VSC_ASSIGN_OR_RETURN(
      ring_port_,
      RingPort::Bind(control_io_, asio::ip::tcp::endpoint(vip, config_.ring_port), *ring_router_));
  ring_port_->Start();
  admin_ =
      std::make_unique<AdminApi>(*plane_, *control_, config_, clock_, admin_token_, lookup_port_);
  admin_->SetServices(services_);
  admin_->AddMetrics([this] { return ring_port_->RenderMetrics(); });
  if (state_sync_) admin_->AddMetrics([this] { return state_sync_->RenderMetrics(); });
  if (etcd_services_) admin_->AddMetrics([this] { return etcd_services_->RenderMetrics(); });
  admin_->SetViewBarrier(
      [this](std::function<void()> done) { pool_.AfterPosted(control_io_, std::move(done)); });
  admin_http_ = std::make_unique<net::HttpServer>(
      control_io_,
      asio::ip::tcp::endpoint(asio::ip::make_address(config_.admin_listen), config_.admin_port),
      net::HttpServer::AsyncHandler(
          [this](net::HttpRequest r) { return admin_->Serve(std::move(r)); }));
  VSC_RETURN_IF_ERROR(admin_http_->Start().Annotate("admin API"));
  if (!config_.http_auth.empty()) {
    VSC_ASSIGN_OR_RETURN(auto users, LoadHttpUsers(config_.http_auth));
    http_users_.emplace(std::move(users));
  }
  net::HttpServerOptions ho;
  ho.limits.max_body = static_cast<size_t>(config_.http_max_body);
  ho.request_timeout = std::chrono::milliseconds(config_.http_request_timeout_ms);
  ho.tls = http_tls_;
  sql_http_server_ = std::make_unique<net::HttpServer>(
      control_io_,
      asio::ip::tcp::endpoint(asio::ip::make_address(config_.http_listen), config_.http_port),
      [this](net::HttpRequest r) { return sql_http_->Handle(std::move(r)); }, ho);
  VSC_RETURN_IF_ERROR(sql_http_server_->Start().Annotate("HTTP API (http_port)"));
  if (!replication) return Status::Ok();
  VSC_ASSIGN_OR_RETURN(
      write_listener_,
      WriteServer::Bind(control_io_, asio::ip::tcp::endpoint(vip, config_.write_port)));
  VSC_ASSIGN_OR_RETURN(
      auto sql, ReadRouter::Bind(control_io_, asio::ip::udp::endpoint(vip, config_.sql_port)));
  sql_socket_.emplace(std::move(sql));
  return Status::Ok();
}

Status Director::BindLookup(const asio::ip::address& vip, EngineOptions::LookupSockets& sockets) {
  uint16_t port = config_.lookup_port;
  for (size_t i = 0; i < pool_.size(); ++i) {
    // The first worker may bind port 0; the others join the port it got (SO_REUSEPORT).
    net::UdpBatchOptions uo;
    uo.reuse_port = true;
    uo.max_datagram = proto::kMaxLookupDatagram + 1;  // +1 so an oversize one shows as such
    auto pair = net::BindTcpUdpPair(pool_.context(i), vip, port, uo);
    if (!pair.ok()) return pair.status().Annotate("lookup service");
    port = pair->port;
    sockets.udp.push_back(std::move(pair->udp));
    sockets.tcp.push_back(std::move(pair->tcp));
  }
  lookup_port_ = port;
  return Status::Ok();
}

Status Director::StartReplication() {
  ReplicatorOptions ro;
  ro.log_file = config_.log_file;
  ro.schema_db = config_.schema_db;
  ro.policy = *replication::ParseCommitPolicy(config_.commit_policy);
  ro.window.max_entries = config_.replica_window_entries;
  ro.window.max_bytes = static_cast<uint64_t>(config_.replica_window_bytes);
  ro.update_queue = config_.update_queue;
  ro.update_queue_bytes = static_cast<uint64_t>(config_.update_queue_bytes);
  ro.log.retain_entries = config_.log_retain_entries;
  ro.log.retain_bytes = static_cast<uint64_t>(config_.log_retain_bytes);
  ro.require_lease = !config_.etcd_endpoints.empty();
  ro.promotion_wait = std::chrono::milliseconds(config_.promotion_wait_ms);
  VSC_ASSIGN_OR_RETURN(replicator_, Replicator::Open(control_io_, *plane_, clock_, ro));
  ReadRelayOptions relay;
  relay.timeout = std::chrono::milliseconds(config_.read_timeout_ms);
  read_relay_ = std::make_unique<ReadRelay>(control_io_, key_, clock_, *replicator_, relay);
  write_server_ = std::make_unique<WriteServer>(control_io_, key_, clock_, *replicator_);
  write_server_->SetReadRelay(read_relay_.get());
  write_server_->Start(std::move(write_listener_));
  ReadRouterOptions rro;
  rro.queue_capacity = config_.request_queue;
  rro.timeout = std::chrono::milliseconds(config_.read_timeout_ms);
  rro.decay_period = std::chrono::milliseconds(config_.heartbeat_interval_ms);
  read_router_ = std::make_unique<ReadRouter>(control_io_, key_, clock_, *replicator_, rro);
  read_router_->Start(std::move(*sql_socket_));
  sql_socket_.reset();
  replicator_->SetListeners([this] { control_->PublishIfNeeded(); },
                            [this] {
                              read_router_->OnProgress();
                              if (sql_http_) sql_http_->OnProgress();
                            });
  control_->SetReplicator(replicator_.get());
  control_->SetFloatingVip(config_.floating_vip);
  admin_->SetReplication(replicator_.get(), write_server_.get(), read_router_.get());
  replicator_->Start();
  spdlog::info("replication on: write port {}, SQL read port {}, log {}, policy {}",
               write_server_->port(), read_router_->port(), config_.log_file,
               config_.commit_policy);
  if (!config_.etcd_endpoints.empty()) {
    StartLeaseKeeper();
    StartInSyncRecorder();
    StartServiceTableWatch();
  }
  return Status::Ok();
}

void Director::StartInSyncRecorder() {
  if (*replication::ParseCommitPolicy(config_.commit_policy) != replication::CommitPolicy::kAll) {
    return;  // the record's rule holds under `all` only (in_sync_record.h)
  }
  const std::string prefix = "/vscluster/" + config_.cluster_name;
  in_sync_recorder_ = std::make_unique<InSyncRecorder>(
      EtcdClientFor(config_), prefix + "/in_sync", prefix + "/sequencer",
      [this](uint64_t epoch, Result<std::optional<InSyncRecord>> record) {
        asio::post(control_io_, [this, epoch, record = std::move(record)]() mutable {
          replicator_->OnInSyncRead(epoch, std::move(record));
        });
      },
      [this](const InSyncRecord& record, const Status& status) {
        asio::post(control_io_,
                   [this, record, status] { replicator_->OnInSyncWritten(record, status); });
      });
  in_sync_recorder_->Start();
  replicator_->SetInSyncStore(in_sync_recorder_.get());
}

void Director::OnLeaseView(const LeaseView& view) {
  if (!replicator_) return;
  replicator_->SetLease(view);
  if (control_) control_->SetStandby(replicator_->StandbyFor());
  if (etcd_services_) etcd_services_->SetLease(view);
}

void Director::StartLeaseKeeper() {
  LeaseKeeperOptions lo;
  lo.key = "/vscluster/" + config_.cluster_name + "/sequencer";
  lo.identity = "director with write port " + net::HostPort(config_.listen, write_server_->port()) +
                ", admin " + net::HostPort(config_.admin_listen, admin_port()) + ", pid " +
                std::to_string(::getpid());
  lo.ttl = std::chrono::milliseconds(config_.sequencer_lease_ttl_ms);
  lease_keeper_ = std::make_unique<LeaseKeeper>(
      EtcdClientFor(config_), std::move(lo), clock_, [this](const LeaseView& view) {
        asio::post(control_io_, [this, view] { OnLeaseView(view); });
      });
  lease_keeper_->Start();
  spdlog::info("sequencer lease: etcd {}, key /vscluster/{}/sequencer, TTL {} ms",
               fmt::join(config_.etcd_endpoints, ","), config_.cluster_name,
               config_.sequencer_lease_ttl_ms);
}

void Director::StartSqlHttp() {
  SqlHttpOptions so;
  so.advertise = net::HostPort(config_.http_listen, http_port());
  so.https = http_tls_ != nullptr;
  so.read_timeout = std::chrono::milliseconds(config_.read_timeout_ms);
  so.read_stall_timeout = std::chrono::milliseconds(config_.read_stall_timeout_ms);
  so.max_result_rows = config_.max_result_rows;
  so.max_result_bytes = static_cast<uint64_t>(config_.max_result_bytes);
  so.users = http_users_;
  sql_http_ = std::make_unique<SqlHttpApi>(control_io_, key_, clock_, replicator_.get(), so);
}

void Director::ArmRateTimer() {
  rate_timer_->expires_after(std::chrono::seconds(1));
  rate_timer_->async_wait([this](const asio::error_code& ec) {
    if (ec) return;
    admin_->SampleRates();
    ArmRateTimer();
  });
}

void Director::Publish(ViewPtr) {
  if (engine_) engine_->OnMembershipChanged();
}

void Director::Stop() {
  if (!started_) return;
  started_ = false;
  asio::post(control_io_, [this] {
    if (rate_timer_) rate_timer_->cancel();
    if (admin_http_) admin_http_->Stop();
    if (sql_http_server_) sql_http_server_->Stop();
    if (replicator_) replicator_->Stop();
    if (write_server_) write_server_->Stop();
    if (read_router_) read_router_->Stop();
    control_->Stop();
    if (engine_) engine_->Stop();
    if (state_sync_) state_sync_->Stop();
    ring_port_->Stop();
    control_io_.stop();
  });
  if (control_thread_.joinable()) control_thread_.join();
  // After the replicator stopped: the revoke lets a standby take over at once.
  if (lease_keeper_) lease_keeper_->Stop();
  if (in_sync_recorder_) in_sync_recorder_->Stop();
  if (table_watch_) table_watch_->Stop();
  pool_.Stop();
  pool_.Join();
  spdlog::info("director stopped");
}

void Director::RunUntilSignal(const std::function<Result<ConfigText>()>& reload) {
  for (;;) {
    const int sig = WaitForTerminationOrHangup();
    if (sig != SIGHUP) {
      spdlog::info("signal {} received, stopping", sig);
      break;
    }
    if (!reload) {
      spdlog::warn("SIGHUP: no configuration file to reload the [[service]] tables from");
      continue;
    }
    auto text = reload();
    if (!text.ok()) {
      spdlog::error("SIGHUP: {}; the running services are unchanged", text.status().ToString());
      continue;
    }
    asio::post(control_io_, [this, text = std::move(text).value()] {
      auto changes = ReloadServices(*services_, text.text, text.origin);
      if (!changes.ok()) {
        spdlog::error("SIGHUP: {}; the running services are unchanged",
                      changes.status().ToString());
      } else {
        spdlog::info("SIGHUP: {} reloaded, {} change(s) applied", text.origin, changes->size());
      }
    });
  }
  Stop();
}

}  // namespace vsc::director
