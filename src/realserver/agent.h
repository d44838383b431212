// Agent: a real server's link to the director (DESIGN §5). Keeps one persistent TCP control
// session (register, then hold it open: its loss tells the director at once that this server is
// gone), and sends a heartbeat with the current load over UDP every period the director gave in
// its RegisterAck. When the session breaks (director restart, DOWN by timeout), the agent
// reconnects with backoff and registers again under the same incarnation.
//
// Thread: all work runs on the agent's io_context (one thread). Stop() may be called from another
// thread: it posts a graceful leave (DOWN heartbeat, Deregister) and waits for it.
#pragma once

#include <asio.hpp>

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/counter.h"
#include "proto/auth.h"
#include "proto/control.pb.h"
#include "proto/envelope.h"
#include "realserver/load_monitor.h"

namespace vsc::realserver {

struct AgentOptions {
  std::string id;
  asio::ip::tcp::endpoint director;  // control port
  uint32_t weight = 1;
  uint64_t incarnation = 0;
  std::vector<proto::Endpoint> endpoints;
  std::vector<std::string> capabilities;
};

struct AgentCounters {
  Counter registrations;   // accepted RegisterAcks
  Counter refusals;        // refused registrations
  Counter connect_failures;
  Counter sessions_lost;
  Counter heartbeats_sent;
};

class Agent {
 public:
  Agent(asio::io_context& io, AgentOptions options, const proto::ClusterKey& key,
        const Clock& clock, LoadTracker& load);

  void Start();
  // Graceful leave: a heartbeat flagged DOWN and a Deregister, then close. Blocks until done
  // (at most about a second), callable from any thread while the io_context runs.
  void Stop();

  bool registered() const { return registered_.load(); }
  const AgentCounters& counters() const { return counters_; }

 private:
  static asio::awaitable<void> Run(Agent* self);
  static asio::awaitable<void> HeartbeatLoop(Agent* self, uint64_t generation);
  void SendHeartbeat(bool down);
  std::vector<uint8_t> Sealed(const proto::Message& m);
  void LeaveOnLoop();

  asio::io_context& io_;
  AgentOptions options_;
  proto::EnvelopeCodec codec_;
  proto::CounterSource counter_;
  const Clock& clock_;
  LoadTracker& load_;
  AgentCounters counters_;

  std::unique_ptr<asio::ip::tcp::socket> session_;
  std::unique_ptr<asio::ip::udp::socket> heartbeat_socket_;
  asio::ip::udp::endpoint heartbeat_to_;
  asio::steady_timer timer_;
  std::chrono::milliseconds interval_{200};
  uint64_t heartbeat_counter_ = 0;
  uint64_t generation_ = 0;  // bumps each session, so an old heartbeat loop knows to stop
  std::atomic<bool> registered_{false};
  std::atomic<bool> stopping_{false};
};

}  // namespace vsc::realserver
