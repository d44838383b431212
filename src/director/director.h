// Director: the composition of the load balancer (DESIGN §2-§4). Owns the control thread (control
// sessions, heartbeats, membership, health checks, admin API, and with replication the
// Replicator, the write port and the SQL read port) and the worker pool, where the
// ServiceEngine runs the data paths of every virtual service, the built-in lookup entries
// included, each with its own SO_REUSEPORT sockets per worker. Each new ClusterView (membership)
// makes the engine publish new service views to the workers. Replication runs when schema_db
// is set or log_file exists.
//
// Lifecycle: construct → Start() → Stop() (stops accepting, closes sessions, joins threads).
// Start/Stop from one thread. Start runs in an order that makes a failed start harmless: it
// validates the whole configuration, locks the replication log (FileLock, so a second director
// in the same directory is refused naming the first one's pid), binds every socket, and only
// then writes: the log (a new epoch), `after_bind` (the CLI writes a new admin token file
// there), the ready file. An error before the writes leaves nothing running and the disk as it
// was; an error returned by Start leaves nothing running.
#pragma once

#include <asio.hpp>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "common/clock.h"
#include "common/file_lock.h"
#include "director/admin_api.h"
#include "director/control_plane.h"
#include "director/control_server.h"
#include "director/director_config.h"
#include "director/etcd_service_editor.h"
#include "director/in_sync_recorder.h"
#include "director/lease_keeper.h"
#include "director/read_router.h"
#include "director/replicator.h"
#include "director/ring_port.h"
#include "director/ring_router.h"
#include "director/service_engine.h"
#include "director/service_store.h"
#include "director/service_table_watch.h"
#include "director/sql_http_api.h"
#include "director/state_sync.h"
#include "director/write_server.h"
#include "net/http_server.h"
#include "net/worker_pool.h"
#include "proto/cluster_key.h"

namespace vsc::director {

class Director {
 public:
  Director(DirectorConfig config, proto::ClusterKey key, std::string admin_token,
           const Clock& clock);
  ~Director();

  Status Start(const std::function<Status()>& after_bind = nullptr);
  void Stop();
  // Blocks until SIGINT or SIGTERM, then stops. On SIGHUP, `reload` reads the configuration
  // file again and its [[service]] tables become the running table (only the difference is
  // applied; a file that does not load changes nothing); without `reload` SIGHUP is logged.
  struct ConfigText {
    std::string text;
    std::string origin;  // the file's path, for error messages
  };
  void RunUntilSignal(const std::function<Result<ConfigText>()>& reload = nullptr);

  uint16_t lookup_port() const { return lookup_port_; }
  uint16_t control_port() const { return control_->control_port(); }
  uint16_t heartbeat_port() const { return control_->heartbeat_port(); }
  uint16_t admin_port() const { return admin_http_ ? admin_http_->local_port() : 0; }
  uint16_t ring_port() const { return ring_port_ ? ring_port_->port() : 0; }
  uint16_t sync_port() const { return state_sync_ ? state_sync_->port() : 0; }
  const RingPort* ring() const { return ring_port_.get(); }
  uint16_t write_port() const { return write_server_ ? write_server_->port() : 0; }
  uint16_t sql_port() const { return read_router_ ? read_router_->port() : 0; }
  // The virtual services (issue 12): the table and its runtime. Valid once Start succeeded;
  // control thread only (post to control_context(): the engine has no lock).
  // Changes through services() are saved to services_file (SavingServiceEditor) and, with
  // etcd_endpoints, kept in etcd (EtcdServiceEditor).
  ServiceEditor& services() { return *services_; }
  // asio::post target for work on the control thread (the engine, the admin API).
  asio::io_context& control_context() { return control_io_; }
  // The worker threads (tests delay one to see that an admin change waits for every worker).
  net::WorkerPool& workers() { return pool_; }
  uint16_t http_port() const { return sql_http_server_ ? sql_http_server_->local_port() : 0; }

 private:
  void Publish(ViewPtr view);
  void ArmRateTimer();
  // Every socket, no file written; with replication the write and SQL sockets wait in
  // write_listener_ / sql_socket_ for StartReplication.
  Status Bind(bool replication);
  // The lookup entries' sockets, TCP and UDP on one port (lookup_port, which may be 0).
  Status BindLookup(const asio::ip::address& vip, EngineOptions::LookupSockets& sockets);
  Status StartReplication();
  // etcd_endpoints set: the thread that claims and renews the sequencer lease (issue 11).
  void StartLeaseKeeper();
  // etcd_endpoints set and policy `all`: the thread that keeps the in-sync record in etcd.
  void StartInSyncRecorder();
  // On the control thread: a new view of the sequencer lease, for the replicator and, as a
  // standby or not, for the control server.
  void OnLeaseView(const LeaseView& view);
  // The service engine and the initial table (etcd's when it holds one, else config.services;
  // plus the built-in lookup entries), every socket bound (director_services.cc).
  Status StartServices(EngineOptions::LookupSockets lookup);
  // sync_peers set: the state sync daemon on its socket (director_services.cc).
  Status StartStateSync(std::shared_ptr<SyncOutbox> outbox);
  // etcd_endpoints set: the service table's key as a start-up read (its table replaces
  // config_.services when it loads), and the editor that keeps every change in etcd.
  Result<int64_t> AdoptEtcdServices(bool& applied);
  void KeepServicesInEtcd(const std::set<vservice::ServiceKey>& builtin, int64_t revision,
                          bool applied);
  // The thread that reads the service table's key for every director (issue 11).
  void StartServiceTableWatch();
  // The rqlite-compatible HTTP API's handler, on the replicator when there is one (its port is
  // bound by Bind; no request is served before the control thread runs).
  void StartSqlHttp();

  DirectorConfig config_;
  proto::ClusterKey key_;
  std::string admin_token_;
  const Clock& clock_;

  asio::io_context control_io_;
  std::thread control_thread_;
  net::WorkerPool pool_;
  std::unique_ptr<ControlPlane> plane_;
  std::unique_ptr<ControlServer> control_;
  std::unique_ptr<ServiceEngine> engine_;
  std::unique_ptr<SavingServiceEditor> saving_;       // engine_, saving every change
  std::unique_ptr<EtcdServiceEditor> etcd_services_;  // saving_, through etcd; or null
  ServiceEditor* services_ = nullptr;                 // the outermost of the two above
  std::unique_ptr<ServiceTableWatch> table_watch_;    // null without etcd_endpoints
  std::shared_ptr<StateSync> state_sync_;             // null without sync_peers
  std::unique_ptr<RingRouter> ring_router_;
  std::unique_ptr<RingPort> ring_port_;               // clients: table, owner, via-director
  std::unique_ptr<Replicator> replicator_;            // null when replication is off
  std::unique_ptr<LeaseKeeper> lease_keeper_;         // null without etcd_endpoints
  std::unique_ptr<InSyncRecorder> in_sync_recorder_;  // null without etcd or policy `all`
  std::unique_ptr<ReadRelay> read_relay_;             // before write_server_: its sessions use it
  std::unique_ptr<WriteServer> write_server_;
  std::unique_ptr<ReadRouter> read_router_;
  std::unique_ptr<AdminApi> admin_;
  std::unique_ptr<net::HttpServer> admin_http_;
  std::unique_ptr<SqlHttpApi> sql_http_;  // the rqlite-compatible API
  std::unique_ptr<net::HttpServer> sql_http_server_;
  std::optional<HttpUsers> http_users_;              // from http_auth, loaded by Bind
  std::shared_ptr<net::TlsServerContext> http_tls_;  // from http_cert/http_key, loaded by Start
  std::unique_ptr<asio::steady_timer> rate_timer_;
  std::optional<FileLock> log_lock_;                  // with replication, from Start on
  std::unique_ptr<net::TcpListener> write_listener_;  // bound, until StartReplication
  std::optional<asio::ip::udp::socket> sql_socket_;   // bound, until StartReplication
  uint16_t lookup_port_ = 0;
  bool started_ = false;
};

// Checks a configuration before anything binds: scheduler name, netmask, heartbeat periods,
// replication settings.
Status ValidateConfig(const DirectorConfig& config);
// The etcd keys: endpoints, cluster_name, sequencer_lease_ttl_ms and etcd_timeout_ms.
Status ValidateLeaseConfig(const DirectorConfig& config);
// A client of the configured etcd endpoints (ValidateLeaseConfig checked them).
EtcdClient EtcdClientFor(const DirectorConfig& config);
// Whether Start runs replication: schema_db is set or log_file exists.
bool ReplicationWanted(const DirectorConfig& config);
// The files start-up reads exist and the directories it writes into are writable.
Status CheckStartFiles(const DirectorConfig& config);

}  // namespace vsc::director
