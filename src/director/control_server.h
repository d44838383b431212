// ControlServer: the director's control-plane I/O on the control thread (DESIGN §5, §9, §12).
// - TCP control sessions: the director opens each with a challenge (a fresh nonce); the real
//   server registers (authenticated envelope in a length frame) sealing that nonce in, which
//   proves the Register fresh whatever the clocks did, and gets a RegisterAck; the session stays
//   open; when it closes the server is DOWN at once. Counters of later frames are checked per
//   session. The ControlPlane refuses a second live process with an id in use.
//   With a Replicator, a server offering "sql" is admitted by it (catch-up or snapshot), gets
//   Replicate / InstallSnapshot on the same session and answers ReplicaAck. Each session has
//   one reader coroutine and one writer coroutine draining its Outbox.
// - UDP heartbeats: one authenticated envelope per datagram.
// - A tick every quarter heartbeat period: missed-heartbeat detection, view publication.
// Unauthenticated, replayed or malformed messages are dropped and counted. On a TCP session the
// director then writes the unauthenticated auth-failed frame (the same 4 bytes whatever failed)
// and closes, and logs a warning (rate-limited); on UDP it stays silent (no amplification).
// Heartbeat counters are checked per (sender, incarnation), so a restarted server's counter
// window never depends on its old one.
//
// Thread: everything runs on the control io_context's single thread; `publish` is called there.
#pragma once

#include <asio.hpp>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "common/clock.h"
#include "common/counter.h"
#include "common/log_throttle.h"
#include "director/control_plane.h"
#include "director/outbox.h"
#include "director/replicator.h"
#include "director/ring_router.h"
#include "net/tcp_listener.h"
#include "proto/auth.h"
#include "proto/envelope.h"

namespace vsc::director {

struct ControlCounters {
  Counter sessions_opened;
  Counter sessions_closed;
  Counter registrations_refused;
  Counter heartbeats_received;
  Counter dropped_malformed;        // not an envelope, body does not parse, wrong message kind
  Counter dropped_unauthenticated;  // HMAC does not verify
  Counter dropped_replayed;         // counter already seen or too old
  Counter dropped_oversize;         // frame over the limit
  Counter views_published;
  Counter ring_tables_sent;
};

// The heartbeat replay window's key: one window per process of a server, so a restarted server
// (whose counters may restart lower, if its clock stepped back) starts a window of its own.
std::string HeartbeatSender(std::string_view id, uint64_t incarnation);

class ControlServer {
 public:
  using Publisher = std::function<void(ViewPtr)>;

  ControlServer(asio::io_context& io, ControlPlane& plane, const proto::ClusterKey& key,
                const Clock& clock, Publisher publish);

  Status Start(const asio::ip::tcp::endpoint& control, const asio::ip::udp::endpoint& heartbeat);
  // Before the io_context runs; nullptr (the default) when replication is off.
  void SetReplicator(Replicator* replicator) { replicator_ = replicator; }
  // Before the io_context runs: the ring's router. Every ring change (checked with each
  // publication) is pushed to every open session as a RingTable; a session gets the current
  // table right after its RegisterAck.
  void SetRingRouter(RingRouter* router) { ring_ = router; }
  void Stop();
  uint16_t control_port() const { return control_port_; }
  uint16_t heartbeat_port() const { return heartbeat_port_; }
  const ControlCounters& counters() const { return counters_; }
  size_t open_sessions() const { return sessions_.size(); }

  // Publishes a new view when membership or settings changed (at once) or load figures changed
  // (at most once per heartbeat period). Call after any change to the ControlPlane.
  void PublishIfNeeded(bool force = false);

  // The director that holds the sequencer lease when it is another one (Replicator::StandbyFor),
  // after each lease change. While set, registrations are refused with REFUSAL_STANDBY; when it
  // becomes set, every open control session is closed, so the real servers find the active
  // director (agent.h).
  void SetStandby(const std::optional<std::string>& holder);
  // floating_vip: the control port listens on a VIP keepalived moves, so a registration that
  // reaches it found the VIP on this host. A standby then accepts it (the server takes lookups
  // at once; as a replica it waits for this director to hold the lease) instead of refusing.
  void SetFloatingVip(bool floating) { floating_vip_ = floating; }

  // Operator remove (ControlPlane::Remove), then tell the server's process, if its session is
  // open, with Command "removed" and close that session; its heartbeat window is forgotten.
  Status RemoveServer(const std::string& id);

 private:
  struct SessionState;
  // What the session does after a frame.
  enum class Next { kContinue, kClose, kRefused };
  static asio::awaitable<void> Session(ControlServer* self, asio::ip::tcp::socket socket);
  static asio::awaitable<void> HeartbeatLoop(ControlServer* self);
  static asio::awaitable<void> TickLoop(ControlServer* self);
  // Opens an envelope (HMAC only); nullopt, counted, when it does not open.
  Result<proto::Opened> Open(std::span<const uint8_t> bytes);
  // One frame of a control session: authentication, freshness, dispatch.
  Next OnSessionFrame(SessionState& st, std::span<const uint8_t> frame);
  Next OnRegister(SessionState& st, const proto::Register& reg);
  Next RefuseStandby(SessionState& st, const proto::Register& reg, const std::string& holder);
  // The peer's frame did not open as an authentic, fresh envelope: warn (rate-limited), answer
  // the auth-failed frame, close once written.
  Next RefuseUnauthenticated(SessionState& st, const std::string& why);
  void EndSession(SessionState& st);
  // Seals a message from the director and frames it; empty if it cannot be sealed (too big).
  std::vector<uint8_t> SealFrame(const proto::Message& message);
  // The same for a message already serialized (ReplicaLink::SendEncoded).
  std::vector<uint8_t> SealEncodedFrame(std::string_view message);
  // The current ring table, sealed and framed.
  std::vector<uint8_t> RingTableFrame();
  friend class SessionLink;

  asio::io_context& io_;
  ControlPlane& plane_;
  proto::EnvelopeCodec codec_;
  proto::ReplayGuard heartbeat_replay_;  // keyed by HeartbeatSender(id, incarnation)
  proto::CounterSource counter_;
  const Clock& clock_;
  Publisher publish_;
  ControlCounters counters_;
  Replicator* replicator_ = nullptr;
  RingRouter* ring_ = nullptr;

  std::unique_ptr<net::TcpListener> listener_;
  std::unique_ptr<asio::ip::udp::socket> heartbeat_socket_;
  std::unique_ptr<asio::steady_timer> tick_timer_;
  uint16_t control_port_ = 0;
  uint16_t heartbeat_port_ = 0;
  bool stopping_ = false;
  TimePoint last_load_publish_{};
  uint64_t next_session_ = 0;
  LogThrottle auth_log_{std::chrono::seconds(5)};
  LogThrottle standby_log_{std::chrono::seconds(5)};
  std::optional<std::string> standby_for_;  // SetStandby
  bool floating_vip_ = false;               // SetFloatingVip
  bool standby_accepting_logged_ = false;   // while standby_for_: logged once
  // Open control sessions by server id, to close the session of a server declared DOWN so that
  // it reconnects and registers again.
  struct OpenSession {
    std::shared_ptr<asio::ip::tcp::socket> socket;
    std::shared_ptr<Outbox> outbox;
    uint64_t number = 0;
  };
  std::map<std::string, OpenSession> sessions_;
};

}  // namespace vsc::director
