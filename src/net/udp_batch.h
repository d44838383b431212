// UdpBatchSocket: a non-blocking IPv4 or IPv6 UDP socket that receives with recvmmsg(2) and replies
// with sendmmsg(2), in batches, driven by one asio::io_context (DESIGN.md §4).
//
// Ownership and threads: a socket belongs to one worker. Bind() may be called on any thread;
// Start() may be called on any thread before the context runs, or on the context's thread;
// everything else (Stop, SendTo, stats, destruction) on the context's thread or while no thread
// runs the context. Not thread safe. Destroying the socket cancels its pending waits; their
// handlers notice the socket is gone and do nothing.
//
// Several sockets may bind the same port with `reuse_port` (one per worker); the kernel spreads
// flows over them by 4-tuple hash, so a flow stays on one worker.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include <asio/io_context.hpp>
#include <asio/ip/udp.hpp>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "common/status.h"
#include "net/endpoint.h"

namespace vsc::net {

// One received datagram. `data` points into the socket's receive arena and is valid until the
// handler returns; the handler may rewrite it in place.
struct Datagram {
  std::span<uint8_t> data;
  SockAddr peer;  // of the socket's family
};

// Outgoing datagrams produced by a handler, sent with as few sendmmsg calls as the kernel allows.
// Prepare() hands out a writable buffer of max_len bytes, Commit() queues the first `len` of
// them for `to`. Only the span from the latest Prepare() is valid. The batch grows past its
// initial capacity if a handler produces more replies than it received.
class SendBatch {
 public:
  SendBatch(size_t batch, size_t max_datagram);

  std::span<uint8_t> Prepare(size_t max_len);
  // `to` must be of the socket's family (the kernel refuses the datagram otherwise: tx_errors).
  void Commit(size_t len, const SockAddr& to);
  size_t size() const { return entries_.size(); }
  void Clear();

 private:
  friend class UdpBatchSocket;
  struct Entry {
    size_t offset;
    size_t len;
    SockAddr to;
  };
  std::vector<uint8_t> arena_;
  size_t used_ = 0;
  std::vector<Entry> entries_;
};

struct UdpBatchOptions {
  size_t batch = 64;           // datagrams per recvmmsg / initial sendmmsg capacity
  size_t max_datagram = 2048;  // larger datagrams are truncated by the kernel, dropped, counted
  bool reuse_port = false;     // SO_REUSEPORT, one socket per worker on the same port
  int rcvbuf = 4 << 20;        // SO_RCVBUF (SO_RCVBUFFORCE first when permitted)
  int sndbuf = 4 << 20;        // SO_SNDBUF (SO_SNDBUFFORCE first when permitted)
};

class UdpBatchSocket {
 public:
  using Handler = std::function<void(std::span<Datagram> in, SendBatch& out)>;

  struct Stats {
    uint64_t rx_packets = 0;    // datagrams handed to the handler
    uint64_t rx_batches = 0;    // recvmmsg calls that returned at least one datagram
    uint64_t tx_packets = 0;    // datagrams the kernel accepted (batched and SendTo)
    uint64_t tx_batches = 0;    // sendmmsg calls that sent at least one datagram
    uint64_t rx_truncated = 0;  // datagrams longer than max_datagram, dropped
    uint64_t tx_errors = 0;     // datagrams the kernel refused (EMSGSIZE, unreachable, full)
  };

  // Opens and binds the socket. Fails with kIo naming the endpoint and the errno text (e.g.
  // "bind 127.0.0.1:9000: Address already in use"), kInvalidArgument for a zero batch /
  // max_datagram. The socket's family is the endpoint's.
  static Result<std::unique_ptr<UdpBatchSocket>> Bind(asio::io_context& ctx,
                                                      const asio::ip::udp::endpoint& ep,
                                                      const UdpBatchOptions& options);
  ~UdpBatchSocket();
  UdpBatchSocket(const UdpBatchSocket&) = delete;
  UdpBatchSocket& operator=(const UdpBatchSocket&) = delete;

  uint16_t local_port() const;
  int native_handle();

  // Starts the loop: wait readable → recvmmsg until EAGAIN (yielding to the context every few
  // batches) → handler → send `out` (partial sends are retried; EAGAIN waits for writable and
  // pauses receiving, which is the backpressure) → repeat.
  void Start(Handler handler);
  // Stops receiving; datagrams already queued in `out` may be dropped. SendTo still works.
  void Stop();

  // Direct non-blocking send for control-plane users. A full send buffer returns
  // kResourceExhausted (the datagram is dropped, as UDP would); other failures kIo.
  Status SendTo(std::span<const uint8_t> data, const SockAddr& to);

  const Stats& stats() const { return stats_; }

 private:
  UdpBatchSocket(asio::io_context& ctx, const UdpBatchOptions& options);

  void Drain();
  void ArmRead();
  // Sends what is left of out_; returns false when it had to wait for writability (Drain is
  // resumed when the send completes).
  bool Flush();

  asio::io_context& ctx_;
  asio::ip::udp::socket socket_;
  UdpBatchOptions options_;
  Handler handler_;
  bool running_ = false;
  // Handlers capture a weak_ptr to this token; expired means the socket was destroyed.
  std::shared_ptr<int> alive_ = std::make_shared<int>(0);

  // Receive side: one arena slot of max_datagram bytes per message.
  std::vector<uint8_t> rx_arena_;
  std::vector<mmsghdr> rx_msgs_;
  std::vector<iovec> rx_iov_;
  std::vector<SockAddr> rx_addrs_;
  std::vector<Datagram> rx_datagrams_;

  // Send side: out_ is filled by the handler; tx_msgs_/tx_iov_ are built from it at flush time.
  SendBatch out_;
  size_t tx_next_ = 0;  // first entry of out_ not yet sent
  std::vector<mmsghdr> tx_msgs_;
  std::vector<iovec> tx_iov_;

  Stats stats_;
};

}  // namespace vsc::net
