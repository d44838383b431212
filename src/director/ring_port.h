// RingPort: the director's ring endpoint for clients (docs/protocol.md "Clip relay", DESIGN.md
// §8), on TCP `ring_port`, speaking the relay's own frames (relay/clip_codec.h) as a Redis
// Cluster client speaks RESP to any node for CLUSTER SLOTS:
// - TABLE: the route table (version, members, ids, endpoints) in one request, for prefetch;
// - OWNER key: the owner's name and endpoint in one request (ask mode);
// - PUBLISH, FETCH, SUBSCRIBE: via-director mode: the director forwards the request to the
//   group's owner over a connection of this client's own and relays every answer back, the
//   request ids untouched (a subscription's clips keep flowing).
// Clients are unauthenticated here, as on the nodes; the port holds only what any client may
// read. Counters tell how many requests of each kind came, so a test can check that prefetch
// clients never touched the director.
//
// Thread: the director's control io_context (the RingRouter's thread).
#pragma once

#include <asio.hpp>
#include <memory>
#include <string>

#include "common/counter.h"
#include "common/status.h"
#include "director/ring_router.h"
#include "net/tcp_listener.h"

namespace vsc::director {

struct RingPortCounters {
  Counter connections;
  Counter tables;
  Counter owners;
  Counter via_director;  // PUBLISH, FETCH, SUBSCRIBE forwarded to an owner
  Counter refused;
};

class RingPort {
 public:
  static Result<std::unique_ptr<RingPort>> Bind(asio::io_context& io,
                                                const asio::ip::tcp::endpoint& at,
                                                const RingRouter& router);
  void Start();
  void Stop();
  uint16_t port() const { return listener_->local_port(); }
  const RingPortCounters& counters() const { return counters_; }
  // vsc_director_ring_requests_total{kind=...} and vsc_director_ring_version.
  std::string RenderMetrics() const;

 private:
  class Session;
  RingPort(asio::io_context& io, const RingRouter& router) : io_(io), router_(router) {}

  asio::io_context& io_;
  const RingRouter& router_;
  std::unique_ptr<net::TcpListener> listener_;
  RingPortCounters counters_;
};

}  // namespace vsc::director
