// WriteServer: the director's write port (DESIGN §7, seed 000 §3.3): writers connect over TCP
// and send WriteRequests, each in an authenticated envelope (cluster key, any sender name) in a
// length frame; the answer is a WriteResponse sealed by "director", sent when the Replicator
// decides (commit policy met) or refuses. Several requests may be in flight on one session;
// answers carry the request_id and may come in any order.
//
// Replay protection: a ReplayGuard per sender name across every session, so a captured request
// cannot be replayed on a new connection. Writers should therefore give each connection its own
// sender name (counters on one TCP stream always increase); a request refused as a replay is
// not applied and the session is closed, like any message that fails authentication. Such a
// session is first answered with the auth-failed frame (auth_refusal.h), so the writer can say
// "wrong cluster key?" instead of "connection closed".
//
// A ReadRequest on a write session is handed to the ReadRelay (read_relay.h), which streams a
// replica's answer back on the same session: reads of any size for `vsc sql`.
//
// Thread: the control thread (the Replicator's). Lifecycle: Bind, then Start accepts; Stop closes
// the listener and every session (registry `sessions_`).
#pragma once

#include <asio.hpp>
#include <memory>
#include <set>

#include "common/clock.h"
#include "common/counter.h"
#include "common/log_throttle.h"
#include "director/outbox.h"
#include "director/read_relay.h"
#include "director/replicator.h"
#include "net/tcp_listener.h"
#include "proto/auth.h"
#include "proto/envelope.h"

namespace vsc::director {

struct WriteServerCounters {
  Counter sessions_opened;
  Counter requests;
  Counter dropped_malformed;        // not an envelope, not a WriteRequest
  Counter dropped_unauthenticated;  // HMAC does not verify
  Counter dropped_replayed;
  Counter dropped_oversize;
};

class WriteServer {
 public:
  WriteServer(asio::io_context& io, const proto::ClusterKey& key, const Clock& clock,
              Replicator& replicator);

  // Binds the write port (port 0: any), before anything else starts: kIo naming the address.
  static Result<std::unique_ptr<net::TcpListener>> Bind(asio::io_context& io,
                                                        const asio::ip::tcp::endpoint& endpoint);
  // Accepts on a listener from Bind (same io_context).
  void Start(std::unique_ptr<net::TcpListener> listener);
  void Stop();
  // Reads on write sessions go to `relay` (set before Start; null: they close the session).
  void SetReadRelay(ReadRelay* relay) { relay_ = relay; }
  uint16_t port() const { return port_; }
  size_t open_sessions() const { return sessions_.size(); }
  const WriteServerCounters& counters() const { return counters_; }

 private:
  static asio::awaitable<void> Session(WriteServer* self, asio::ip::tcp::socket socket);
  void Refuse(Outbox& outbox, const asio::ip::tcp::socket& socket, const std::string& why);

  asio::io_context& io_;
  proto::EnvelopeCodec codec_;
  proto::ReplayGuard replay_;
  proto::CounterSource counter_;
  const Clock& clock_;
  LogThrottle auth_log_{std::chrono::seconds(5)};
  Replicator& replicator_;
  ReadRelay* relay_ = nullptr;
  WriteServerCounters counters_;
  std::unique_ptr<net::TcpListener> listener_;
  uint16_t port_ = 0;
  bool stopping_ = false;
  std::set<std::shared_ptr<asio::ip::tcp::socket>> sessions_;
};

}  // namespace vsc::director
