// RealServer: the composition of a real server (DESIGN §2, §7): the agent on its own control
// thread, the replica (the database's one writer) on its applier thread, and per worker thread
// one LookupService and one SqlService, each with its own SQLite read connection.
//
// Lifecycle: construct → Start() (locks the database, binds every socket, opens the database as
// a replica, then registers in the background once the replica is ready) → Stop() (graceful leave,
// stop applying, stop serving, join). Start/Stop from one thread.
#pragma once

#include <asio.hpp>
#include <atomic>
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
#include "realserver/replica.h"
#include "realserver/snapshot_server.h"
#include "realserver/sql_service.h"
#include "relay/relay_node.h"

namespace vsc::realserver {

class RealServer {
 public:
  RealServer(RealServerConfig config, proto::ClusterKey key, const Clock& clock);
  ~RealServer();

  Status Start();
  void Stop();
  // Serves until SIGINT/SIGTERM, or until the agent ends for good (duplicate id, removed by the
  // operator), then stops. Returns the process's exit code: 0, or the agent's.
  int RunUntilSignal();

  uint16_t lookup_port() const { return lookup_port_; }
  uint16_t http_port() const { return http_port_; }
  uint16_t sql_port() const { return sql_port_; }
  uint16_t relay_port() const { return relay_ ? relay_->port() : 0; }
  uint16_t sql_tcp_port() const { return sql_tcp_port_; }
  Replica* replica() { return replica_.get(); }
  bool registered() const { return agent_ && agent_->registered(); }
  // Prometheus text: counters summed over the workers, replication position, agent counters.
  std::string RenderMetrics() const;

 private:
  // The phases of Start: every socket (no file touched), then the database, then the agent.
  Status BindServices(const std::vector<asio::ip::address>& trusted);
  Status OpenReplica(FileLock lock);
  void StartAgent(std::vector<asio::ip::tcp::endpoint> directors);
  // Runs f(i) on every worker i and returns once all have run it.
  void OnEveryWorker(const std::function<void(size_t)>& f);
  void CloseReaders();
  void ReopenReaders();

  RealServerConfig config_;
  proto::ClusterKey key_;
  const Clock& clock_;
  LoadTracker load_;
  net::WorkerPool pool_;
  std::unique_ptr<SnapshotServer> snapshots_;  // GET /v1/snapshot, on its own thread
  std::vector<std::unique_ptr<LookupService>> services_;
  std::vector<std::unique_ptr<SqlService>> sql_services_;
  std::unique_ptr<Replica> replica_;
  uint64_t install_session_ = 0;  // agent thread: the session whose stream a snapshot replaces
  asio::io_context control_io_;
  std::unique_ptr<asio::executor_work_guard<asio::io_context::executor_type>> control_guard_;
  std::thread control_thread_;
  std::unique_ptr<Agent> agent_;
  std::unique_ptr<relay::RelayNode> relay_;  // with config.relay
  RunQueueSource run_queue_;  // opened (checked) at Start, read by the agent
  uint16_t lookup_port_ = 0;
  uint16_t http_port_ = 0;
  uint16_t sql_port_ = 0;
  uint16_t sql_tcp_port_ = 0;
  bool started_ = false;
  std::atomic<bool> serving_{false};
  // Set by the agent's on_exit (agent thread) before it wakes RunUntilSignal; -1 while none.
  std::atomic<int> exit_code_{-1};
  std::string exit_reason_;  // every worker's services exist (metrics may sum them)
};

Status ValidateConfig(const RealServerConfig& config);
relay::RelayOptions RelayOptionsOf(const RealServerConfig& config);
// The database file must exist unless create_db: a mistyped path must not start an empty
// replica. NotFound naming the path and the ways to get a copy.
Status CheckDatabaseFile(const RealServerConfig& config);

}  // namespace vsc::realserver
