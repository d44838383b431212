#include "client/relay_link.h"

#include <poll.h>
#include <sys/socket.h>

#include <array>
#include <cerrno>

#include "client/lookup_target.h"
#include "client/socket_wait.h"
#include "ring/table_codec.h"

namespace vsc::client {

RelayLink::RelayLink(UniqueFd fd, std::string where, const Clock& clock)
    : fd_(std::move(fd)),
      where_(std::move(where)),
      clock_(&clock),
      decoder_(ring::kMaxTableSize) {}  // a client reads route tables too

Result<RelayLink> RelayLink::Connect(const std::string& host, uint16_t port, TimePoint deadline,
                                     const Clock& clock) {
  VSC_ASSIGN_OR_RETURN(net::SockAddr target, ResolveHost(host, port));
  VSC_ASSIGN_OR_RETURN(UniqueFd fd, ConnectTcp(target, deadline, clock));
  return RelayLink(std::move(fd), net::HostPort(host, port), clock);
}

Status RelayLink::Send(const relay::Frame& frame, TimePoint deadline) {
  if (!fd_.valid()) return Unavailable("connection to " + where_ + " is closed");
  const std::vector<uint8_t> bytes = relay::EncodeFrame(frame);
  std::span<const uint8_t> rest(bytes);
  while (!rest.empty()) {
    const ssize_t n = ::send(fd_.get(), rest.data(), rest.size(), MSG_NOSIGNAL);
    if (n >= 0) {
      rest = rest.subspan(static_cast<size_t>(n));
      continue;
    }
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      if (Status st = WaitFor(fd_.get(), POLLOUT, deadline, *clock_); !st.ok()) {
        return Unavailable("send to " + where_ + ": " + st.message());
      }
      continue;
    }
    const int err = errno;
    fd_.Reset();
    return Unavailable(ErrnoStatus("send to " + where_, err).message());
  }
  return Status::Ok();
}

Result<relay::Frame> RelayLink::Receive(TimePoint deadline) {
  std::array<uint8_t, 64 * 1024> buf;
  for (;;) {
    auto next = decoder_.Next();
    if (!next.ok()) {
      fd_.Reset();
      return DataLoss("bad framing from " + where_ + ": " + next.status().message());
    }
    if (next->has_value()) return std::move(**next);
    if (!fd_.valid()) return Unavailable("connection to " + where_ + " is closed");
    if (Status st = WaitFor(fd_.get(), POLLIN, deadline, *clock_); !st.ok()) {
      return Unavailable("no answer from " + where_ + ": " + st.message());
    }
    const ssize_t n = ::recv(fd_.get(), buf.data(), buf.size(), 0);
    if (n == 0) {
      fd_.Reset();
      return Unavailable("connection closed by " + where_);
    }
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK) continue;
      const int err = errno;
      fd_.Reset();
      return Unavailable(ErrnoStatus("recv from " + where_, err).message());
    }
    decoder_.Feed(std::span(buf.data(), static_cast<size_t>(n)));
  }
}

}  // namespace vsc::client
