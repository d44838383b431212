// Batched datagram system calls for sockets driven by hand (UdpNatService): MmsgReceiver takes up
// to `batch` datagrams in one recvmmsg(2) into slots of its own, MmsgSender sends what it was
// given in as few sendmmsg(2) calls as the kernel allows. Both are reused batch after batch and
// allocate nothing once built (the sender grows only past its initial capacity).
//
// Not thread safe; a receiver's data is valid until its next Receive.
#pragma once

#include <sys/socket.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "net/endpoint.h"

namespace vsc::net {

// The largest UDP payload (IPv4: 65,507 bytes; IPv6 without jumbograms: 65,527): with slots this
// large no datagram is ever truncated.
inline constexpr size_t kMaxUdpPayload = 65536;
// sendmmsg(2) takes at most UIO_MAXIOV messages per call.
inline constexpr size_t kMaxMessagesPerSend = 1024;

class MmsgReceiver {
 public:
  // The slots' memory is left uninitialised, so pages no datagram reached are never touched.
  MmsgReceiver(size_t batch, size_t max_datagram);
  MmsgReceiver(const MmsgReceiver&) = delete;
  MmsgReceiver& operator=(const MmsgReceiver&) = delete;

  // recvmmsg(fd, MSG_DONTWAIT): how many datagrams arrived (at least 1), or -errno (-EAGAIN when
  // none is queued). Fewer than capacity() means the queue was empty when the call returned.
  int Receive(int fd);

  size_t capacity() const { return msgs_.size(); }
  std::span<const uint8_t> data(size_t i) const {
    return {static_cast<const uint8_t*>(iov_[i].iov_base), msgs_[i].msg_len};
  }
  const SockAddr& peer(size_t i) const { return peers_[i]; }
  // Longer than max_datagram: the kernel kept only the first bytes.
  bool truncated(size_t i) const { return (msgs_[i].msg_hdr.msg_flags & MSG_TRUNC) != 0; }

 private:
  size_t max_datagram_;
  std::unique_ptr<uint8_t[]> arena_;
  std::vector<mmsghdr> msgs_;
  std::vector<iovec> iov_;
  std::vector<SockAddr> peers_;
};

class MmsgSender {
 public:
  explicit MmsgSender(size_t batch);

  void Clear();
  // Queues `data` (not copied: it must stay valid until Send) for `to`, or for the socket's
  // connected peer when `to` is null. `to` must outlive Send too.
  void Add(std::span<const uint8_t> data, const SockAddr* to);
  size_t size() const { return iov_.size(); }

  struct Outcome {
    size_t sent = 0;
    size_t refused = 0;  // the kernel refused it (ECONNREFUSED from an earlier ICMP, EMSGSIZE...)
    size_t dropped = 0;  // the socket's send buffer was full (EAGAIN): dropped, as UDP would
    size_t unreachable = 0;  // of `refused`: ECONNREFUSED, the peer's port was unreachable
  };
  // Sends every queued datagram with MSG_DONTWAIT, never waiting, and clears the queue.
  Outcome Send(int fd);

 private:
  std::vector<iovec> iov_;
  std::vector<const SockAddr*> to_;
  std::vector<mmsghdr> msgs_;
};

}  // namespace vsc::net
