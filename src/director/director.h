// Director: the composition of the load balancer (DESIGN §2-§4). Owns the control thread (control
// sessions, heartbeats, membership, admin API) and the worker pool (one UdpService and one
// TcpService per worker, each with its own SO_REUSEPORT socket). The control thread publishes
// each new ClusterView to every worker by asio::post.
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
#include "director/tcp_service.h"
#include "director/udp_service.h"
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

 private:
  void Publish(ViewPtr view);
  void ArmRateTimer();

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
  std::unique_ptr<AdminApi> admin_;
  std::unique_ptr<net::HttpServer> admin_http_;
  std::unique_ptr<asio::steady_timer> rate_timer_;
  uint16_t lookup_port_ = 0;
  bool started_ = false;
};

// Checks a configuration before anything binds: scheduler name, netmask, heartbeat periods.
Status ValidateConfig(const DirectorConfig& config);

}  // namespace vsc::director
