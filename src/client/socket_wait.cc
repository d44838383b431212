#include "client/socket_wait.h"

#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>

#include <cerrno>

#include "client/lookup_target.h"

namespace vsc::client {

Status WaitFor(int fd, short events, TimePoint deadline, const Clock& clock) {
  for (;;) {
    const Duration left = deadline - clock.Now();
    if (left <= Duration::zero()) return Unavailable("timed out");
    pollfd pfd{fd, events, 0};
    const timespec ts{static_cast<time_t>(left.count() / 1'000'000'000),
                      static_cast<long>(left.count() % 1'000'000'000)};
    const int rc = ::ppoll(&pfd, 1, &ts, nullptr);
    if (rc < 0 && errno != EINTR) return ErrnoStatus("poll(tcp)", errno);
    if (rc > 0) return Status::Ok();
  }
}

Result<UniqueFd> ConnectTcp(const net::SockAddr& target, TimePoint deadline, const Clock& clock,
                            std::string_view what) {
  UniqueFd fd(
      ::socket(target.is_v6() ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!fd.valid()) return ErrnoStatus("socket(tcp)", errno);
  const int one = 1;
  ::setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  const std::string where = std::string(what) + " " + FormatAddress(target);
  if (::connect(fd.get(), target.get(), target.length()) != 0) {
    if (errno != EINPROGRESS) return Unavailable(ErrnoStatus(where, errno).message());
    Status st = WaitFor(fd.get(), POLLOUT, deadline, clock);
    if (!st.ok()) return Unavailable(where + ": " + st.message());
    int err = 0;
    socklen_t len = sizeof(err);
    ::getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &err, &len);
    if (err != 0) return Unavailable(ErrnoStatus(where, err).message());
  }
  return fd;
}

}  // namespace vsc::client
