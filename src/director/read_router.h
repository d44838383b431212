// ReadRouter: the director's SQL read port (DESIGN §3 `sql`, §7 read-your-writes, seed 001's
// request queue). A client sends one authenticated envelope holding a ReadRequest per UDP
// datagram. The router checks the HMAC (no replay check: reads are idempotent), picks the
// least-loaded replica that is ACTIVE, in sync, not BUSY and has applied min_seq, prepends the
// forward header naming the client (docs/protocol.md: 12 bytes for an IPv4 client, 24 for an
// IPv6 one) and forwards the datagram unchanged to the replica's "sql-udp" endpoint; the replica
// answers the client directly. The port may be IPv4, IPv6 or dual-stack ([::], which reaches
// IPv4 replicas through mapped addresses); an IPv4 port does not choose IPv6 replicas.
// With no replica eligible the read waits in the bounded request queue until one is (the
// replicator reports progress) or `timeout` passes; a full queue, a timeout or a min_seq beyond
// the last sequenced write are answered by the director itself: ReadResponse{ok=false, error}.
//
// Thread: the control thread (it reads the Replicator's state directly; no view to publish).
// Lifecycle: Bind, then Start serves; Stop closes the socket and answers nothing more.
#pragma once

#include <asio.hpp>

#include <map>
#include <memory>
#include <string>

#include "common/clock.h"
#include "common/counter.h"
#include "director/read_queue.h"
#include "director/replicator.h"
#include "proto/auth.h"
#include "proto/envelope.h"

namespace vsc::director {

struct ReadRouterOptions {
  size_t queue_capacity = 10000;
  Duration timeout = std::chrono::seconds(2);
  Duration decay_period = std::chrono::milliseconds(200);  // halves the recent-read counts
};

struct ReadRouterCounters {
  Counter received;
  Counter forwarded;
  Counter queued;            // held at least once
  Counter refused_overload;  // queue full
  Counter timed_out;
  Counter refused_min_seq;   // min_seq beyond the last sequenced write
  Counter dropped_malformed;
  Counter dropped_unauthenticated;
  Counter send_errors;
};

class ReadRouter {
 public:
  ReadRouter(asio::io_context& io, const proto::ClusterKey& key, const Clock& clock,
             Replicator& replicator, ReadRouterOptions options);

  // Binds the read port (port 0: any), before anything else starts: kIo naming the address.
  static Result<asio::ip::udp::socket> Bind(asio::io_context& io,
                                            const asio::ip::udp::endpoint& endpoint);
  // Serves on a socket from Bind (same io_context).
  void Start(asio::ip::udp::socket socket);
  void Stop();
  // Replicas advanced or changed state: forward what the queue holds if it can go now.
  void OnProgress();

  uint16_t port() const { return port_; }
  size_t queue_depth() const { return queue_.size(); }
  size_t queue_capacity() const { return queue_.capacity(); }
  const ReadRouterCounters& counters() const { return counters_; }

 private:
  static asio::awaitable<void> ReceiveLoop(ReadRouter* self);
  void Handle(std::span<const uint8_t> datagram, const asio::ip::udp::endpoint& from);
  // Forwards to the best replica for min_seq; false when none is eligible.
  bool Route(std::span<const uint8_t> datagram, const net::SockAddr& client, uint64_t min_seq);
  void Answer(const net::SockAddr& client, uint64_t request_id, const std::string& error);
  void ArmTimer();
  void OnTimer();

  asio::io_context& io_;
  proto::EnvelopeCodec codec_;
  proto::CounterSource counter_;
  const Clock& clock_;
  Replicator& replicator_;
  ReadRouterOptions options_;
  ReadRouterCounters counters_;
  ReadQueue queue_;
  std::unique_ptr<asio::ip::udp::socket> socket_;
  asio::steady_timer timer_;
  TimePoint last_decay_{};
  std::map<std::string, double> recent_;  // reads sent per replica, halved every decay period
  std::vector<uint8_t> send_buf_;
  uint16_t port_ = 0;
  bool v6_port_ = false;  // the port's socket is IPv6 (dual-stack when bound to [::])
  bool stopping_ = false;
};

}  // namespace vsc::director
