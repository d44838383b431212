#include "bench/lookup_channel.h"

#include <poll.h>
#include <sys/socket.h>

#include <array>
#include <cerrno>

#include "client/socket_wait.h"
#include "proto/frame.h"
#include "proto/lookup_codec.h"

namespace vsc::bench {
namespace {

class UdpChannel final : public LookupChannel {
 public:
  UdpChannel(UniqueFd fd, net::SockAddr target) : fd_(std::move(fd)), target_(target) {
    for (size_t i = 0; i < kBatch; ++i) {
      iov_[i] = {bufs_[i].data(), bufs_[i].size()};
      msgs_[i].msg_hdr.msg_iov = &iov_[i];
      msgs_[i].msg_hdr.msg_iovlen = 1;
    }
  }

  int fd() const override { return fd_.get(); }

  Status Send(std::span<const uint8_t> request) override {
    if (::sendto(fd_.get(), request.data(), request.size(), 0, target_.get(), target_.length()) <
        0) {
      return ErrnoStatus("sendto " + client::FormatAddress(target_), errno);
    }
    return Status::Ok();
  }

  Status Poll(short, const AnswerFn& on_answer) override {
    for (;;) {
      const int n = ::recvmmsg(fd_.get(), msgs_.data(), kBatch, MSG_DONTWAIT, nullptr);
      if (n < 0) {
        // ECONNREFUSED reports an ICMP error for some earlier datagram; the socket still works.
        if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR || errno == ECONNREFUSED) {
          return Status::Ok();
        }
        return ErrnoStatus("recvmmsg", errno);
      }
      for (int i = 0; i < n; ++i) on_answer(std::span(bufs_[i].data(), msgs_[i].msg_len));
      if (n < static_cast<int>(kBatch)) return Status::Ok();
    }
  }

 private:
  static constexpr size_t kBatch = 32;
  UniqueFd fd_;
  net::SockAddr target_;
  std::array<std::array<uint8_t, proto::kMaxLookupDatagram>, kBatch> bufs_;
  std::array<iovec, kBatch> iov_;
  std::array<mmsghdr, kBatch> msgs_{};
};

class TcpChannel final : public LookupChannel {
 public:
  TcpChannel(UniqueFd fd, net::SockAddr target, Duration connect_timeout,
             const Clock& clock)
      : fd_(std::move(fd)), target_(target), connect_timeout_(connect_timeout), clock_(clock) {}

  int fd() const override { return fd_.get(); }
  bool WantsWrite() const override { return out_pos_ < out_.size(); }

  Status Send(std::span<const uint8_t> request) override {
    if (!fd_.valid()) {
      VSC_ASSIGN_OR_RETURN(fd_,
                           client::ConnectTcp(target_, clock_.Now() + connect_timeout_, clock_));
      decoder_ = proto::FrameDecoder(proto::kMaxLookupMessage);
      out_.clear();
      out_pos_ = 0;
    }
    proto::AppendFrame(out_, request);
    return Flush();
  }

  Status Poll(short revents, const AnswerFn& on_answer) override {
    if (!fd_.valid()) return Status::Ok();
    if ((revents & POLLOUT) != 0) VSC_RETURN_IF_ERROR(Flush());
    for (;;) {
      const ssize_t n = ::recv(fd_.get(), in_.data(), in_.size(), MSG_DONTWAIT);
      if (n == 0) return Broken(Unavailable("connection closed by the server"));
      if (n < 0) {
        if (errno == EAGAIN || errno == EWOULDBLOCK) break;
        if (errno == EINTR) continue;
        return Broken(ErrnoStatus("recv", errno));
      }
      decoder_.Feed(std::span(in_.data(), static_cast<size_t>(n)));
      for (;;) {
        auto frame = decoder_.Next();
        if (!frame.ok()) return Broken(DataLoss(frame.status().message()));
        if (!frame->has_value()) break;
        on_answer(**frame);
      }
    }
    return Status::Ok();
  }

 private:
  Status Flush() {
    while (out_pos_ < out_.size()) {
      const ssize_t n =
          ::send(fd_.get(), out_.data() + out_pos_, out_.size() - out_pos_, MSG_NOSIGNAL);
      if (n < 0) {
        if (errno == EAGAIN || errno == EWOULDBLOCK) break;
        if (errno == EINTR) continue;
        return Broken(ErrnoStatus("send", errno));
      }
      out_pos_ += static_cast<size_t>(n);
    }
    if (out_pos_ == out_.size()) {
      out_.clear();
      out_pos_ = 0;
    }
    return Status::Ok();
  }

  Status Broken(Status why) {
    fd_.Reset();
    return why.Annotate("lookup over tcp to " + client::FormatAddress(target_));
  }

  UniqueFd fd_;
  net::SockAddr target_;
  Duration connect_timeout_;
  const Clock& clock_;
  proto::FrameDecoder decoder_{proto::kMaxLookupMessage};
  std::vector<uint8_t> out_;
  size_t out_pos_ = 0;
  std::array<uint8_t, 16384> in_;
};

}  // namespace

Result<std::unique_ptr<LookupChannel>> LookupChannel::Open(client::Transport transport,
                                                           const net::SockAddr& target,
                                                           Duration connect_timeout,
                                                           const Clock& clock) {
  if (transport == client::Transport::kTcp) {
    VSC_ASSIGN_OR_RETURN(UniqueFd fd,
                         client::ConnectTcp(target, clock.Now() + connect_timeout, clock));
    return std::unique_ptr<LookupChannel>(
        std::make_unique<TcpChannel>(std::move(fd), target, connect_timeout, clock));
  }
  UniqueFd fd(
      ::socket(target.is_v6() ? AF_INET6 : AF_INET, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!fd.valid()) return ErrnoStatus("socket(udp)", errno);
  // Bursts of answers in open-loop mode must not overflow the default receive buffer.
  const int size = 4 << 20;
  ::setsockopt(fd.get(), SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
  return std::unique_ptr<LookupChannel>(std::make_unique<UdpChannel>(std::move(fd), target));
}

}  // namespace vsc::bench
