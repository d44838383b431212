// RealServer: the composition of a real server (DESIGN §2): the agent on its own control thread,
// and one LookupService per worker thread, each with its own SQLite read connection.
//
// Lifecycle: construct → Start() (opens the database, binds, registers in the background) →
// Stop() (graceful leave, stop serving, join). Start/Stop from one thread.
#pragma once

#include <asio.hpp>

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "common/clock.h"
#include "net/worker_pool.h"
#include "proto/cluster_key.h"
#include "realserver/agent.h"
#include "realserver/load_monitor.h"
#include "realserver/lookup_service.h"
#include "realserver/realserver_config.h"

namespace vsc::realserver {

class RealServer {
 public:
  RealServer(RealServerConfig config, proto::ClusterKey key, const Clock& clock);
  ~RealServer();

  Status Start();
  void Stop();
  void RunUntilSignal();

  uint16_t lookup_port() const { return lookup_port_; }
  uint16_t http_port() const { return http_port_; }
  bool registered() const { return agent_ && agent_->registered(); }

 private:
  RealServerConfig config_;
  proto::ClusterKey key_;
  const Clock& clock_;
  LoadTracker load_;
  net::WorkerPool pool_;
  std::vector<std::unique_ptr<LookupService>> services_;
  asio::io_context control_io_;
  std::unique_ptr<asio::executor_work_guard<asio::io_context::executor_type>> control_guard_;
  std::thread control_thread_;
  std::unique_ptr<Agent> agent_;
  uint16_t lookup_port_ = 0;
  uint16_t http_port_ = 0;
  bool started_ = false;
};

Status ValidateConfig(const RealServerConfig& config);

}  // namespace vsc::realserver
