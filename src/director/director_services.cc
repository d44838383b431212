// The Director's virtual-service table at start-up and, with etcd_endpoints, its key in etcd
// (issue 11): director.cc composes the rest.
#include <spdlog/spdlog.h>

#include "director/default_services.h"
#include "director/director.h"
#include "director/service_table_sync.h"

namespace vsc::director {

EtcdClient EtcdClientFor(const DirectorConfig& config) {
  std::vector<EtcdEndpoint> endpoints;
  for (const std::string& e : config.etcd_endpoints) endpoints.push_back(*ParseEtcdEndpoint(e));
  return EtcdClient(std::move(endpoints), std::chrono::milliseconds(config.etcd_timeout_ms));
}

Status Director::StartServices(EngineOptions::LookupSockets lookup) {
  EngineOptions eo;
  eo.sched.mh_table_size = config_.mh_table_size;
  eo.sched.dwlc_reference_ms = config_.dwlc_reference_ms;
  eo.nat.connect_timeout = std::chrono::milliseconds(config_.nat_connect_timeout_ms);
  eo.timeouts = {std::chrono::seconds(config_.tcp_timeout_s),
                 std::chrono::seconds(config_.tcpfin_timeout_s),
                 std::chrono::seconds(config_.udp_session_timeout_s)};
  eo.nat.expire_nodest_conn = config_.expire_nodest_conn;
  eo.sched.expire_quiescent_template = config_.expire_quiescent_template;
  eo.builtin = BuiltinServiceKeys(config_, lookup_port_);
  eo.lookup = std::move(lookup);
  eo.dr_decay_period = std::chrono::milliseconds(config_.heartbeat_interval_ms);
  const std::set<vservice::ServiceKey> builtin = eo.builtin;
  std::shared_ptr<SyncOutbox> outbox;
  if (!config_.sync_peers.empty()) outbox = std::make_shared<SyncOutbox>();
  eo.sync = outbox;
  engine_ = std::make_unique<ServiceEngine>(control_io_, pool_, clock_, *plane_, std::move(eo));
  bool from_etcd = false;
  int64_t revision = 0;
  if (!config_.etcd_endpoints.empty()) {
    VSC_ASSIGN_OR_RETURN(revision, AdoptEtcdServices(from_etcd));
  }
  VSC_ASSIGN_OR_RETURN(auto table, InitialServiceTable(config_, lookup_port_));
  VSC_RETURN_IF_ERROR(engine_->Commit(std::move(table)).status().Annotate("virtual services"));
  if (outbox) VSC_RETURN_IF_ERROR(StartStateSync(std::move(outbox)));
  // Every change from here on is saved (the start's own table is already on disk or in the
  // configuration file); the built-in entries come from the [director] keys at every start.
  saving_ = std::make_unique<SavingServiceEditor>(*engine_, ServicesFilePath(config_), builtin);
  services_ = saving_.get();
  if (!config_.etcd_endpoints.empty()) KeepServicesInEtcd(builtin, revision, from_etcd);
  return Status::Ok();
}

Result<int64_t> Director::AdoptEtcdServices(bool& applied) {
  const std::string key = ServiceTableKey(config_.cluster_name);
  EtcdClient client = EtcdClientFor(config_);
  auto kv = client.Get(key);
  if (!kv.ok()) {
    spdlog::warn(
        "service table: etcd did not answer for {} at start ({}); starting from the "
        "local table, etcd's is applied once it answers",
        key, kv.status().message());
    return int64_t{0};
  }
  if (!kv->has_value()) {
    spdlog::info(
        "service table: etcd has no {}; the local table is written there by the first "
        "lease holder",
        key);
    return int64_t{0};
  }
  const vservice::TableLimits limits =
      config_.services ? config_.services->limits() : vservice::TableLimits{};
  auto table = DecodeServiceTable(**kv, limits);
  if (!table.ok()) {
    spdlog::error("service table: {}; ignored, starting from the local table",
                  table.status().message());
    return (*kv)->mod_revision;
  }
  spdlog::info(
      "virtual services from etcd {} at revision {} ({} services); services_file and "
      "the [[service]] tables are not used",
      key, (*kv)->mod_revision, table->services().size());
  config_.services = std::move(table).value();
  applied = true;
  return (*kv)->mod_revision;
}

void Director::KeepServicesInEtcd(const std::set<vservice::ServiceKey>& builtin, int64_t revision,
                                  bool applied) {
  // services_file follows etcd: the table that runs is saved as a local copy.
  if (applied) {
    if (auto saved = saving_->Commit(engine_->table()); !saved.ok()) {
      spdlog::warn("service table from etcd not saved to {}: {}", saving_->path(),
                   saved.status().message());
    }
  }
  etcd_services_ = std::make_unique<EtcdServiceEditor>(
      *saving_, EtcdClientFor(config_), ServiceTableKey(config_.cluster_name), builtin, clock_);
  etcd_services_->StartedFrom(revision, applied);
  services_ = etcd_services_.get();
}

void Director::StartServiceTableWatch() {
  table_watch_ = std::make_unique<ServiceTableWatch>(
      EtcdClientFor(config_), ServiceTableKey(config_.cluster_name),
      std::chrono::milliseconds(config_.service_table_poll_ms),
      [this](const std::optional<etcd::KeyValue>& kv) {
        asio::post(control_io_, [this, kv] { etcd_services_->OnRead(kv); });
      });
  table_watch_->Start();
  spdlog::info("service table: etcd key {}, watched (read every {} ms while a watch fails)",
               ServiceTableKey(config_.cluster_name), config_.service_table_poll_ms);
}

Status Director::StartStateSync(std::shared_ptr<SyncOutbox> outbox) {
  StateSyncOptions so;
  so.listen = config_.sync_listen;
  so.port = config_.sync_port;
  so.peers = config_.sync_peers;
  state_sync_ =
      std::make_shared<StateSync>(control_io_, key_, std::move(so), std::move(outbox),
                                  [this](const SyncRecord& r) { return engine_->AdoptSynced(r); });
  return state_sync_->Start();
}

}  // namespace vsc::director
