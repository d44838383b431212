// Agent: a real server's link to the director (DESIGN §5, §7). Keeps one persistent TCP control
// session (register, then hold it open: its loss tells the director at once that this server is
// gone), and sends a heartbeat with the current load and replication position over UDP every
// period the director gave in its RegisterAck. When the session breaks (director restart, DOWN
// by timeout, or CloseSession after a snapshot install), the agent reconnects with backoff and
// registers again under the same incarnation, reporting its position afresh.
//
// Several directors (the active one and its standbys, issue 11): the agent registers with
// whichever accepts it, trying them in turn (director_list.h). A standby refuses with
// REFUSAL_STANDBY, and closes its sessions when it learns that another director holds the
// sequencer lease, so the agent moves on to the active one within a backoff step. The control
// connection sends TCP keepalive probes (1 s idle, 1 s apart, 3 lost end it), so a VIP that
// moved to another director host ends the session at once, even when the old director lives on.
//
// Session handshake (docs/protocol.md): the director's challenge nonce is sealed into the
// Register, and the agent's own nonce must come back in the RegisterAck, so each side knows the
// other's messages are fresh whatever either clock did; later frames' counters are checked per
// session. Problems on the way (cannot connect, wrong cluster key, refusal) are logged with the
// director's address at every attempt, at most once per 5 s for a repeating one.
//
// Ends by itself, through on_exit, when the director says this process must not serve: a
// registration refused because another live server holds the id (code 1), or the operator
// removed this server (Command "removed", or a refusal of a removed incarnation; code 0).
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
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/clock.h"
#include "common/counter.h"
#include "common/log_throttle.h"
#include "proto/auth.h"
#include "proto/control.pb.h"
#include "proto/envelope.h"
#include "proto/session_frames.h"
#include "realserver/director_list.h"
#include "realserver/load_monitor.h"
#include "realserver/run_queue.h"
#include "realserver/replica.h"

namespace vsc::realserver {

struct AgentOptions {
  std::string id;
  // The directors' control ports, at least one; tried in this order (director_list.h).
  std::vector<asio::ip::tcp::endpoint> directors;
  uint32_t weight = 1;
  uint64_t incarnation = 0;
  std::vector<proto::Endpoint> endpoints;
  std::vector<std::string> capabilities;
  RunQueueSource run_queue;  // what heartbeats report as the run-queue length (run_queue.h)
  // From the connect to the director's RegisterAck at most: a director that accepts and never
  // sends its challenge, or never answers the registration, is left and tried again.
  std::chrono::milliseconds handshake_timeout{5000};

  // Replication (each optional). Called on the agent's thread.
  std::function<ReplicaPosition()> position;  // for Register and heartbeats
  // The database's schema, for Register (a director that takes over adopts it with the head).
  std::function<std::vector<std::string>()> schema;
  std::function<void(uint64_t session, proto::Replicate message)> on_replicate;
  std::function<void(uint64_t session, const proto::InstallSnapshot& install)> on_install_snapshot;
  std::function<void()> on_session_lost;  // queued work of the old session is now useless
  // The director's ring route table (RingTable.table), after each registration and each ring
  // change.
  std::function<void(const std::string& table)> on_ring_table;
  // The agent stopped for good (see above): the process should exit with `code`. `why` has been
  // logged already. Called on the agent's thread, at most once.
  std::function<void(int code, const std::string& why)> on_exit;
};

struct AgentCounters {
  Counter registrations;     // accepted RegisterAcks
  Counter refusals;          // refused registrations
  Counter standby_refusals;  // of which a standby director's ("register with the active one")
  Counter connect_failures;
  Counter sessions_lost;
  Counter heartbeats_sent;
  Counter replicate_received;  // Replicate messages handed to the replica
  Counter acks_sent;
  Counter snapshots_requested;  // InstallSnapshot received
  Counter frames_dropped;       // unauthenticated, replayed or unreadable frames on the session
  Counter ring_tables;          // RingTable messages received
};

class Agent {
 public:
  Agent(asio::io_context& io, AgentOptions options, const proto::ClusterKey& key,
        const Clock& clock, LoadTracker& load);

  void Start();
  // Graceful leave: a heartbeat flagged DOWN and a Deregister, then close. Not registered (yet):
  // closes the connection of the attempt under way and ends the wait before the next one.
  // Blocks until done (at most about two seconds), callable from any thread while the
  // io_context runs; afterwards the agent leaves no operation waiting on it.
  void Stop();

  // Queues `message` on session `session`; dropped when that session is gone. Any thread.
  void Send(uint64_t session, proto::Message message);
  // Ends session `session` once its queue is written, so the agent registers again. Any thread.
  void CloseSession(uint64_t session);

  bool registered() const { return registered_.load(); }
  const AgentCounters& counters() const { return counters_; }

 private:
  struct Session;
  struct Attempt;
  static asio::awaitable<void> Run(Agent* self);
  // Connects, answers the challenge, registers. Logs what went wrong.
  static asio::awaitable<void> Register(Agent* self, Attempt& a);
  static asio::awaitable<void> Handshake(Agent* self, Attempt& a);
  // The director's next frame in the handshake; nullopt, the problem logged, when it does not
  // come or is the auth-failed notice. `missing` says what did not come.
  static asio::awaitable<std::optional<std::vector<uint8_t>>> HandshakeFrame(
      Agent* self, Attempt& a, const std::string& missing);
  // Reads the registered session until it breaks.
  static asio::awaitable<void> Serve(Agent* self, Attempt& a);
  void OnAck(Attempt& a, const proto::RegisterAck& ack);
  // A problem on the way to a registration, logged with the director's address (rate-limited).
  void Problem(std::string_view kind, const std::string& text);
  // The director tried now: its address, and "host:port" for messages.
  const asio::ip::tcp::endpoint& director() const;
  std::string director_text() const;
  proto::Message MakeRegister(const proto::Nonce& challenge, const proto::Nonce& own) const;
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
  const Clock& clock_;
  LoadTracker& load_;
  std::vector<LogThrottle> problems_;  // one per director
  DirectorList directors_;
  AgentCounters counters_;

  std::shared_ptr<Session> session_;
  std::unique_ptr<asio::ip::udp::socket> heartbeat_socket_;
  asio::ip::udp::endpoint heartbeat_to_;
  asio::ip::udp heartbeat_protocol_ = asio::ip::udp::v4();  // heartbeat_socket_'s
  asio::steady_timer retry_timer_;      // the backoff between attempts; Stop cancels it
  asio::steady_timer heartbeat_timer_;  // the current session's period; Stop cancels it
  // The connection of the attempt under way, until it becomes the session; Stop closes it.
  asio::ip::tcp::socket* attempt_socket_ = nullptr;
  std::chrono::milliseconds interval_{200};
  uint64_t heartbeat_counter_ = 0;
  uint64_t generation_ = 0;  // bumps each session, so an old heartbeat loop knows to stop
  std::atomic<bool> registered_{false};
  std::atomic<bool> stopping_{false};
  // Set when the director told this process to go (Command "removed"): exit code and reason.
  std::optional<std::pair<int, std::string>> exit_;
};

}  // namespace vsc::realserver
