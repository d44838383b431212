// Agent: a real server's link to the director (DESIGN §5, §7). Keeps one persistent TCP control
// session (register, then hold it open: its loss tells the director at once that this server is
// gone), and sends a heartbeat with the current load and replication position over UDP every
// period the director gave in its RegisterAck. When the session breaks (director restart, DOWN
// by timeout, or CloseSession after a snapshot install), the agent reconnects with backoff and
// registers again under the same incarnation, reporting its position afresh.
//
// On the session the director streams Replicate and may send InstallSnapshot; the agent hands
// them to the hooks with the session's id, and sends what comes back (ReplicaAck) with Send().
// A session has exactly one writer coroutine draining its queue of sealed frames.
//
// Thread: all work runs on the agent's io_context (one thread). Send, CloseSession and Stop may
// be called from any thread (they post). Stop() posts a graceful leave (DOWN heartbeat,
// Deregister after whatever is queued) and waits for it.
#pragma once

#include <asio.hpp>

#include <atomic>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/counter.h"
#include "proto/auth.h"
#include "proto/control.pb.h"
#include "proto/envelope.h"
#include "realserver/load_monitor.h"
#include "realserver/replica.h"

namespace vsc::realserver {

struct AgentOptions {
  std::string id;
  asio::ip::tcp::endpoint director;  // control port
  uint32_t weight = 1;
  uint64_t incarnation = 0;
  std::vector<proto::Endpoint> endpoints;
  std::vector<std::string> capabilities;

  // Replication (each optional). Called on the agent's thread.
  std::function<ReplicaPosition()> position;  // for Register and heartbeats
  std::function<void(uint64_t session, proto::Replicate message)> on_replicate;
  std::function<void(uint64_t session, const proto::InstallSnapshot& install)> on_install_snapshot;
  std::function<void()> on_session_lost;  // queued work of the old session is now useless
};

struct AgentCounters {
  Counter registrations;   // accepted RegisterAcks
  Counter refusals;        // refused registrations
  Counter connect_failures;
  Counter sessions_lost;
  Counter heartbeats_sent;
  Counter replicate_received;  // Replicate messages handed to the replica
  Counter acks_sent;
  Counter snapshots_requested;  // InstallSnapshot received
  Counter frames_dropped;       // unauthenticated, replayed or unreadable frames on the session
};

class Agent {
 public:
  Agent(asio::io_context& io, AgentOptions options, const proto::ClusterKey& key,
        const Clock& clock, LoadTracker& load);

  void Start();
  // Graceful leave: a heartbeat flagged DOWN and a Deregister, then close. Blocks until done
  // (at most about two seconds), callable from any thread while the io_context runs.
  void Stop();

  // Queues `message` on session `session`; dropped when that session is gone. Any thread.
  void Send(uint64_t session, proto::Message message);
  // Ends session `session` once its queue is written, so the agent registers again. Any thread.
  void CloseSession(uint64_t session);

  bool registered() const { return registered_.load(); }
  const AgentCounters& counters() const { return counters_; }

 private:
  struct Session;
  static asio::awaitable<void> Run(Agent* self);
  static asio::awaitable<void> HeartbeatLoop(Agent* self, uint64_t generation);
  static asio::awaitable<void> Writer(Agent* self, std::shared_ptr<Session> session);
  void Enqueue(const std::shared_ptr<Session>& session, const proto::Message& m);
  void Dispatch(uint64_t session, proto::Message& m);
  void SendHeartbeat(bool down);
  std::vector<uint8_t> Sealed(const proto::Message& m);
  void LeaveOnLoop(std::function<void()> done);

  asio::io_context& io_;
  AgentOptions options_;
  proto::EnvelopeCodec codec_;
  proto::CounterSource counter_;
  proto::ReplayGuard replay_;  // messages from the director, across sessions
  LoadTracker& load_;
  AgentCounters counters_;

  std::shared_ptr<Session> session_;
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
