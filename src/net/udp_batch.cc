#include "net/udp_batch.h"

#include <fcntl.h>
#include <sys/socket.h>

#include <algorithm>
#include <asio/post.hpp>
#include <cerrno>
#include <climits>
#include <cstring>

#include "common/logging.h"
#include "net/endpoint.h"
#include "net/mmsg.h"
#include "net/would_block.h"

namespace vsc::net {
namespace {

// Batches handled per readiness wakeup before yielding to other handlers on the same worker, so
// one busy socket cannot starve the rest of the worker.
constexpr int kBatchesPerWakeup = 8;
void SetBuffer(int fd, int force_opt, int opt, int bytes) {
  if (bytes <= 0) return;
  // The *FORCE variants ignore rmem_max/wmem_max but need CAP_NET_ADMIN; fall back quietly,
  // since the kernel clamps the plain option instead of failing.
  if (::setsockopt(fd, SOL_SOCKET, force_opt, &bytes, sizeof(bytes)) == 0) return;
  (void)::setsockopt(fd, SOL_SOCKET, opt, &bytes, sizeof(bytes));
}

}  // namespace

SendBatch::SendBatch(size_t batch, size_t max_datagram) : arena_(batch * max_datagram) {
  entries_.reserve(batch);
}

std::span<uint8_t> SendBatch::Prepare(size_t max_len) {
  if (arena_.size() < used_ + max_len) arena_.resize(used_ + max_len);
  return std::span<uint8_t>(arena_.data() + used_, max_len);
}

void SendBatch::Commit(size_t len, const SockAddr& to) {
  entries_.push_back(Entry{used_, len, to});
  used_ += len;
}

void SendBatch::Clear() {
  entries_.clear();
  used_ = 0;
}

UdpBatchSocket::UdpBatchSocket(asio::io_context& ctx, const UdpBatchOptions& options)
    : ctx_(ctx),
      socket_(ctx),
      options_(options),
      rx_arena_(options.batch * options.max_datagram),
      rx_msgs_(options.batch),
      rx_iov_(options.batch),
      rx_addrs_(options.batch),
      rx_datagrams_(options.batch),
      out_(options.batch, options.max_datagram) {
  for (size_t i = 0; i < options_.batch; ++i) {
    rx_iov_[i].iov_base = rx_arena_.data() + i * options_.max_datagram;
    rx_iov_[i].iov_len = options_.max_datagram;
    std::memset(&rx_msgs_[i], 0, sizeof(mmsghdr));
    rx_msgs_[i].msg_hdr.msg_iov = &rx_iov_[i];
    rx_msgs_[i].msg_hdr.msg_iovlen = 1;
    rx_msgs_[i].msg_hdr.msg_name = &rx_addrs_[i];
  }
}

UdpBatchSocket::~UdpBatchSocket() {
  asio::error_code ignored;
  socket_.close(ignored);
}

Result<std::unique_ptr<UdpBatchSocket>> UdpBatchSocket::Bind(asio::io_context& ctx,
                                                             const asio::ip::udp::endpoint& ep,
                                                             const UdpBatchOptions& options) {
  if (options.batch == 0 || options.max_datagram == 0) {
    return InvalidArgument("UDP bind " + ToString(ep) +
                           ": batch and max_datagram must be at least 1");
  }
  std::unique_ptr<UdpBatchSocket> s(new UdpBatchSocket(ctx, options));
  asio::error_code ec;
  s->socket_.open(ep.protocol(), ec);
  if (ec) return ErrnoStatus("UDP socket", ec.value());
  int fd = s->socket_.native_handle();
  if (options.reuse_port) {
    int one = 1;
    if (::setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) != 0) {
      return ErrnoStatus("setsockopt SO_REUSEPORT", errno);
    }
  }
  SetBuffer(fd, SO_RCVBUFFORCE, SO_RCVBUF, options.rcvbuf);
  SetBuffer(fd, SO_SNDBUFFORCE, SO_SNDBUF, options.sndbuf);
  s->socket_.bind(ep, ec);
  if (ec) return ErrnoStatus("UDP bind " + ToString(ep), ec.value());
  s->socket_.native_non_blocking(true, ec);
  if (ec) return ErrnoStatus("UDP set non-blocking", ec.value());
  return s;
}

uint16_t UdpBatchSocket::local_port() const {
  asio::error_code ec;
  auto ep = socket_.local_endpoint(ec);
  return ec ? 0 : ep.port();
}

int UdpBatchSocket::native_handle() { return socket_.native_handle(); }

void UdpBatchSocket::Start(Handler handler) {
  handler_ = std::move(handler);
  running_ = true;
  out_.Clear();
  tx_next_ = 0;
  // Data may have arrived before the socket was registered with the reactor (an edge we will
  // never see), so the first step is a receive attempt, not a wait.
  std::weak_ptr<int> alive = alive_;
  asio::post(ctx_, [this, alive] {
    if (!alive.expired()) Drain();
  });
}

void UdpBatchSocket::Stop() {
  running_ = false;
  asio::error_code ignored;
  socket_.cancel(ignored);
}

void UdpBatchSocket::ArmRead() {
  std::weak_ptr<int> alive = alive_;
  socket_.async_wait(asio::socket_base::wait_read, [this, alive](const asio::error_code& ec) {
    if (alive.expired() || ec || !running_) return;
    Drain();
  });
}

void UdpBatchSocket::Drain() {
  if (!running_) return;
  const int fd = socket_.native_handle();
  const unsigned batch = static_cast<unsigned>(options_.batch);
  std::weak_ptr<int> alive = alive_;
  for (int round = 0; round < kBatchesPerWakeup; ++round) {
    for (unsigned i = 0; i < batch; ++i) {
      rx_msgs_[i].msg_hdr.msg_namelen = sizeof(SockAddr);
      rx_msgs_[i].msg_hdr.msg_flags = 0;
    }
    int n = ::recvmmsg(fd, rx_msgs_.data(), batch, MSG_DONTWAIT, nullptr);
    if (n < 0) {
      int err = errno;
      if (err == EINTR) continue;
      // The reactor is edge-triggered: wait only after the kernel said the queue is empty.
      if (!WouldBlock(err)) spdlog::warn("UDP port {}: recvmmsg: {}", local_port(), strerror(err));
      ArmRead();
      return;
    }
    if (n == 0) {
      ArmRead();
      return;
    }
    ++stats_.rx_batches;
    size_t k = 0;
    for (int i = 0; i < n; ++i) {
      const msghdr& h = rx_msgs_[i].msg_hdr;
      if (h.msg_flags & MSG_TRUNC) {
        ++stats_.rx_truncated;
        continue;
      }
      rx_datagrams_[k].data =
          std::span<uint8_t>(static_cast<uint8_t*>(rx_iov_[i].iov_base), rx_msgs_[i].msg_len);
      rx_datagrams_[k].peer = rx_addrs_[i];
      ++k;
    }
    stats_.rx_packets += k;
    if (k > 0) {
      handler_(std::span<Datagram>(rx_datagrams_.data(), k), out_);
      if (alive.expired()) return;  // the handler destroyed the socket
    }
    if (out_.size() > 0 && !Flush()) return;  // Flush resumes Drain once writable
    if (!running_) return;
  }
  asio::post(ctx_, [this, alive] {
    if (!alive.expired()) Drain();
  });
}

bool UdpBatchSocket::Flush() {
  const int fd = socket_.native_handle();
  const size_t total = out_.entries_.size();
  while (tx_next_ < total) {
    size_t count = std::min(total - tx_next_, kMaxMessagesPerSend);
    if (tx_msgs_.size() < count) {
      tx_msgs_.resize(count);
      tx_iov_.resize(count);
    }
    for (size_t i = 0; i < count; ++i) {
      SendBatch::Entry& e = out_.entries_[tx_next_ + i];
      tx_iov_[i].iov_base = out_.arena_.data() + e.offset;
      tx_iov_[i].iov_len = e.len;
      std::memset(&tx_msgs_[i], 0, sizeof(mmsghdr));
      tx_msgs_[i].msg_hdr.msg_iov = &tx_iov_[i];
      tx_msgs_[i].msg_hdr.msg_iovlen = 1;
      tx_msgs_[i].msg_hdr.msg_name = &e.to;
      tx_msgs_[i].msg_hdr.msg_namelen = e.to.length();
    }
    int n = ::sendmmsg(fd, tx_msgs_.data(), static_cast<unsigned>(count), MSG_DONTWAIT);
    if (n > 0) {
      stats_.tx_packets += n;
      ++stats_.tx_batches;
      tx_next_ += n;
      continue;
    }
    int err = errno;
    if (n < 0 && err == EINTR) continue;
    if (n < 0 && WouldBlock(err)) {
      // Stop receiving until the kernel drains: backpressure instead of unbounded queueing.
      std::weak_ptr<int> alive = alive_;
      socket_.async_wait(asio::socket_base::wait_write, [this, alive](const asio::error_code& ec) {
        if (alive.expired() || ec || !running_) return;
        if (Flush()) Drain();
      });
      return false;
    }
    // sendmmsg reports an error only for the first unsent message: that datagram is refused
    // (EMSGSIZE, ENETUNREACH, EPERM...). Drop it, as the network would, and go on.
    ++stats_.tx_errors;
    ++tx_next_;
  }
  out_.Clear();
  tx_next_ = 0;
  return true;
}

Status UdpBatchSocket::SendTo(std::span<const uint8_t> data, const SockAddr& to) {
  for (;;) {
    ssize_t n = ::sendto(socket_.native_handle(), data.data(), data.size(), MSG_DONTWAIT, to.get(),
                         to.length());
    if (n >= 0) {
      ++stats_.tx_packets;
      return Status::Ok();
    }
    int err = errno;
    if (err == EINTR) continue;
    ++stats_.tx_errors;
    if (WouldBlock(err)) {
      return ResourceExhausted("UDP send to " + ToString(to) +
                               ": socket send buffer full; datagram dropped");
    }
    return ErrnoStatus("UDP send to " + ToString(to), err);
  }
}

}  // namespace vsc::net
