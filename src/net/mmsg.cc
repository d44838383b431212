#include "net/mmsg.h"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "net/would_block.h"

namespace vsc::net {

MmsgReceiver::MmsgReceiver(size_t batch, size_t max_datagram)
    : max_datagram_(max_datagram),
      arena_(std::make_unique_for_overwrite<uint8_t[]>(batch * max_datagram)),
      msgs_(batch),
      iov_(batch),
      peers_(batch) {
  for (size_t i = 0; i < batch; ++i) {
    iov_[i].iov_base = arena_.get() + i * max_datagram_;
    iov_[i].iov_len = max_datagram_;
    std::memset(&msgs_[i], 0, sizeof(mmsghdr));
    msgs_[i].msg_hdr.msg_iov = &iov_[i];
    msgs_[i].msg_hdr.msg_iovlen = 1;
    msgs_[i].msg_hdr.msg_name = &peers_[i];
  }
}

int MmsgReceiver::Receive(int fd) {
  for (mmsghdr& m : msgs_) {
    m.msg_hdr.msg_namelen = sizeof(SockAddr);
    m.msg_hdr.msg_flags = 0;
  }
  const int n =
      ::recvmmsg(fd, msgs_.data(), static_cast<unsigned>(msgs_.size()), MSG_DONTWAIT, nullptr);
  if (n < 0) return -errno;
  if (n == 0) return -EAGAIN;
  return n;
}

MmsgSender::MmsgSender(size_t batch) {
  iov_.reserve(batch);
  to_.reserve(batch);
  msgs_.reserve(batch);
}

void MmsgSender::Clear() {
  iov_.clear();
  to_.clear();
}

void MmsgSender::Add(std::span<const uint8_t> data, const SockAddr* to) {
  iov_.push_back({const_cast<uint8_t*>(data.data()), data.size()});
  to_.push_back(to);
}

MmsgSender::Outcome MmsgSender::Send(int fd) {
  Outcome out;
  const size_t total = iov_.size();
  msgs_.resize(std::min(total, kMaxMessagesPerSend));
  size_t next = 0;
  while (next < total) {
    const size_t count = std::min(total - next, kMaxMessagesPerSend);
    for (size_t i = 0; i < count; ++i) {
      msghdr& h = msgs_[i].msg_hdr;
      std::memset(&msgs_[i], 0, sizeof(mmsghdr));
      h.msg_iov = &iov_[next + i];
      h.msg_iovlen = 1;
      if (const SockAddr* to = to_[next + i]) {
        h.msg_name = const_cast<SockAddr*>(to);
        h.msg_namelen = to->length();
      }
    }
    const int n = ::sendmmsg(fd, msgs_.data(), static_cast<unsigned>(count), MSG_DONTWAIT);
    if (n > 0) {
      out.sent += n;
      next += n;
      continue;
    }
    const int err = errno;
    if (n < 0 && err == EINTR) continue;
    if (n < 0 && WouldBlock(err)) {
      out.dropped += total - next;
      break;
    }
    // sendmmsg reports an error only for the first unsent message: that one is refused.
    ++out.refused;
    if (n < 0 && err == ECONNREFUSED) ++out.unreachable;
    ++next;
  }
  Clear();
  return out;
}

}  // namespace vsc::net
