// RelayNode: the clip relay on a real server (`vsc realserver --relay-port`, DESIGN.md §8).
// It runs on the real server's worker pool, one RelayWorker per io_context, each with its own
// SO_REUSEPORT listener: a connection stays on the worker that accepted it. Groups are sharded
// over the workers (worker KeyId(group) mod W owns a group's buffer and subscribers), so no
// group state is shared between threads; a connection's request for a group runs on that
// group's worker and its answer comes back to the connection's worker.
//
// The ring comes from the director over the agent's control session (SetTable, any thread):
// the node serves the groups it owns, forwards others along its fingers, answers MOVED to a
// client with a stale table, copies every clip to its next r - 1 successors before it acks,
// and hands over the clips of an arc that a new node took over.
//
// Lifecycle: construct (before the pool runs) -> Start() binds -> the pool runs -> Stop()
// (posts each worker's Stop and waits) before the pool stops.
#pragma once

#include <asio.hpp>
#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/counter.h"
#include "common/status.h"
#include "net/worker_pool.h"
#include "proto/cluster_key.h"
#include "relay/group_table.h"
#include "relay/ring_view.h"

namespace vsc::relay {

struct RelayOptions {
  std::string name;  // this node's ring name: the real server's id
  std::string listen = "127.0.0.1";
  uint16_t port = 0;
  GroupLimits groups;              // per worker; max_groups is split over the workers
  size_t max_connections = 20000;  // clients and peers, the whole node
  double rate = 2000;              // requests per second per client connection (0: no limit)
  double burst = 500;
  size_t replicas = 3;  // r: the owner and r - 1 copies
  std::chrono::milliseconds peer_timeout{1000};
  size_t max_backlog = 4 << 20;  // bytes queued to one slow subscriber before it is dropped
  size_t fetch_max = 1024;       // clips per fetch answer
};

struct RelayCounters {
  Counter connections;  // accepted, clients and peers
  Counter refused_connections;
  Counter publishes;  // clips stored as owner
  Counter copies;     // copies stored for an owner
  Counter fetches;
  Counter subscribes;
  Counter delivered;     // clips written to subscribers
  Counter forwarded;     // requests forwarded to the next hop
  Counter moved;         // MOVED answers
  Counter refused;       // REFUSED answers, any reason
  Counter takeovers;     // requests served for an unreachable owner
  Counter handed_over;   // clips copied to a new owner after a join
  Counter restored;      // clips copied to a new successor after a ring change
  Counter dropped_slow;  // subscribers dropped for a full backlog
  Counter peer_auth_failures;
};

class RelayWorker;

class RelayNode {
 public:
  RelayNode(net::WorkerPool& pool, RelayOptions options, proto::ClusterKey key, const Clock& clock);
  ~RelayNode();

  Status Start();
  void Stop();
  uint16_t port() const { return port_; }

  // A route table from the director (any thread). An older version than the current one is
  // ignored; a table that does not decode is refused with the reason.
  Status SetTable(std::span<const uint8_t> table);
  RingViewPtr view() const;

  const RelayOptions& options() const { return options_; }
  const proto::ClusterKey& key() const { return key_; }
  const Clock& clock() const { return clock_; }
  size_t workers() const { return workers_.size(); }
  size_t workers_hint() const { return pool_.size(); }  // == workers() once constructed
  RelayWorker& worker(size_t i) { return *workers_[i]; }
  size_t ShardOf(std::string_view group) const;
  // Connections open now, over all workers; a new one is refused past max_connections.
  std::atomic<size_t>& open_connections() { return open_; }
  // Sums of the workers' counters, in Prometheus text.
  std::string RenderMetrics() const;

 private:
  net::WorkerPool& pool_;
  RelayOptions options_;
  proto::ClusterKey key_;
  const Clock& clock_;
  std::vector<std::unique_ptr<RelayWorker>> workers_;
  uint16_t port_ = 0;
  std::atomic<size_t> open_{0};
  mutable std::mutex view_mu_;  // guards view_ (written by the agent thread, read by metrics)
  RingViewPtr view_;
};

}  // namespace vsc::relay
