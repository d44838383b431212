// Director: the composition of the load balancer (DESIGN §2-§4). Owns the control thread (control
// sessions, heartbeats, membership, admin API, and with replication the Replicator, the write
// port and the SQL read port) and the worker pool (one UdpService and one TcpService per worker,
// each with its own SO_REUSEPORT socket). The control thread publishes each new ClusterView to
// every worker by asio::post. Replication runs when schema_db is set or log_file exists.
//
// Lifecycle: construct → Start() (binds every socket, starts threads; an error leaves nothing
// running) → Stop() (stops accepting, closes sessions, joins threads). Start/Stop from one thread.
#pragma once

#include <asio.hpp>

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "common/clock.h"
#include "director/admin_api.h"
#include "director/control_plane.h"
#include "director/control_server.h"
#include "director/counters.h"
#include "director/director_config.h"
#include "director/read_router.h"
#include "director/replicator.h"
#include "director/tcp_service.h"
#include "director/udp_service.h"
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

  Status Start();
  void Stop();
  // Blocks until SIGINT or SIGTERM, then stops.
  void RunUntilSignal();

  uint16_t lookup_port() const { return lookup_port_; }
  uint16_t control_port() const { return control_->control_port(); }
  uint16_t heartbeat_port() const { return control_->heartbeat_port(); }
  uint16_t admin_port() const { return admin_http_ ? admin_http_->local_port() : 0; }
  uint16_t write_port() const { return write_server_ ? write_server_->port() : 0; }
  uint16_t sql_port() const { return read_router_ ? read_router_->port() : 0; }

 private:
  void Publish(ViewPtr view);
  void ArmRateTimer();
  Status StartReplication(const asio::ip::address_v4& vip);

  DirectorConfig config_;
  proto::ClusterKey key_;
  std::string admin_token_;
  const Clock& clock_;

  asio::io_context control_io_;
  std::thread control_thread_;
  net::WorkerPool pool_;
  std::vector<std::unique_ptr<WorkerCounters>> worker_counters_;
  std::vector<std::unique_ptr<UdpService>> udp_;
  std::vector<std::unique_ptr<TcpService>> tcp_;
  std::unique_ptr<ControlPlane> plane_;
  std::unique_ptr<ControlServer> control_;
  std::unique_ptr<Replicator> replicator_;    // null when replication is off
  std::unique_ptr<WriteServer> write_server_;
  std::unique_ptr<ReadRouter> read_router_;
  std::unique_ptr<AdminApi> admin_;
  std::unique_ptr<net::HttpServer> admin_http_;
  std::unique_ptr<asio::steady_timer> rate_timer_;
  uint16_t lookup_port_ = 0;
  bool started_ = false;
};

// Checks a configuration before anything binds: scheduler name, netmask, heartbeat periods,
// replication settings.
Status ValidateConfig(const DirectorConfig& config);

}  // namespace vsc::director
