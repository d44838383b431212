#include "director/etcd_watch.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <string>

#include "common/unique_fd.h"
#include "director/etcd_codec.h"
#include "net/endpoint.h"
#include "net/http_client.h"
#include "net/http_response_parser.h"
#include "net/would_block.h"

namespace vsc::director {
namespace {

constexpr size_t kMaxWatchLine = size_t{1} << 20;  // one watch message

// What polling `fd` for `events` until `deadline` gave: ready, the deadline, or the wake fd.
enum class WatchReady { kFd, kDeadline, kWoken };

Result<WatchReady> PollWatch(int fd, short events, int wake_fd, TimePoint deadline,
                             const Clock& clock) {
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock.Now());
    if (left.count() <= 0) return WatchReady::kDeadline;
    pollfd p[2] = {{fd, events, 0}, {wake_fd, POLLIN, 0}};
    const int n = ::poll(p, 2, static_cast<int>(std::min<int64_t>(left.count() + 1, 60'000)));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoStatus("etcd watch: poll", errno);
    if ((p[1].revents & POLLIN) != 0) return WatchReady::kWoken;
    if (p[0].revents != 0) return WatchReady::kFd;
  }
}

// Connects and sends the watch request; the connected socket, or why not.
Result<UniqueFd> OpenWatch(const EtcdEndpoint& ep, std::string_view key, int64_t start_revision,
                           int wake_fd, TimePoint deadline, const Clock& clock, bool& woken) {
  VSC_ASSIGN_OR_RETURN(auto to, net::ParseTcpEndpoint(ep.Text()));
  UniqueFd fd(::socket(to.protocol().family(), SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (fd.get() < 0) return ErrnoStatus("etcd watch: socket", errno);
  if (::connect(fd.get(), to.data(), static_cast<socklen_t>(to.size())) != 0 &&
      errno != EINPROGRESS) {
    return ErrnoStatus("etcd watch: connect to " + ep.Text(), errno);
  }
  const std::string request =
      net::HttpRequestText("POST", "/v3/watch", etcd::WatchCreateBody(key, start_revision),
                           {{"Content-Type", "application/json"}}, ep.Text());
  size_t sent = 0;
  while (sent < request.size()) {
    VSC_ASSIGN_OR_RETURN(WatchReady r, PollWatch(fd.get(), POLLOUT, wake_fd, deadline, clock));
    if (r != WatchReady::kFd) {
      woken = r == WatchReady::kWoken;
      return UniqueFd();
    }
    const ssize_t n = ::send(fd.get(), request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && (net::WouldBlock(errno) || errno == EINTR)) continue;
    if (n < 0) return ErrnoStatus("etcd watch: send to " + ep.Text(), errno);
    sent += static_cast<size_t>(n);
  }
  return fd;
}

// Whether the stream's complete lines in `lines` hold an event `what` asks for; consumes them.
Result<bool> EventInLines(std::string& lines, WatchFor what) {
  size_t start = 0;
  bool found = false;
  for (size_t nl = lines.find('\n'); nl != std::string::npos; nl = lines.find('\n', start)) {
    std::string_view line(lines.data() + start, nl - start);
    start = nl + 1;
    if (line.find_first_not_of(" \r\t") == std::string_view::npos) continue;
    VSC_ASSIGN_OR_RETURN(etcd::WatchMessage m, etcd::ParseWatchMessage(line));
    if (m.canceled) {
      return Unavailable("etcd ended the watch: " +
                         (m.cancel_reason.empty() ? std::string("canceled") : m.cancel_reason));
    }
    for (const auto& e : m.events) found = found || e.deleted || what == WatchFor::kAnyChange;
  }
  lines.erase(0, start);
  if (lines.size() > kMaxWatchLine) return DataLoss("etcd watch: a message over 1 MiB");
  return found;
}

}  // namespace

Result<WatchEnd> WatchKey(const EtcdClient& client, std::string_view key, int64_t start_revision,
                          WatchFor what, TimePoint deadline, const Clock& clock, int wake_fd) {
  if (client.preferred() == nullptr) return FailedPrecondition("etcd watch: no endpoint");
  if (wake_fd < 0) return FailedPrecondition("etcd watch: no wake descriptor to stop it with");
  const EtcdEndpoint& endpoint = *client.preferred();
  bool woken = false;
  VSC_ASSIGN_OR_RETURN(UniqueFd fd,
                       OpenWatch(endpoint, key, start_revision, wake_fd, deadline, clock, woken));
  if (fd.get() < 0) return woken ? WatchEnd::kWoken : WatchEnd::kDeadline;
  net::HttpResponseParser parser;
  std::string lines;
  char buf[16 * 1024];
  for (;;) {
    VSC_ASSIGN_OR_RETURN(WatchReady r, PollWatch(fd.get(), POLLIN, wake_fd, deadline, clock));
    if (r == WatchReady::kDeadline) return WatchEnd::kDeadline;
    if (r == WatchReady::kWoken) return WatchEnd::kWoken;
    const ssize_t n = ::recv(fd.get(), buf, sizeof buf, 0);
    if (n < 0 && (net::WouldBlock(errno) || errno == EINTR)) continue;
    if (n < 0) return ErrnoStatus("etcd watch: receive from " + endpoint.Text(), errno);
    if (n == 0) return Unavailable("etcd watch: " + endpoint.Text() + " closed the stream");
    auto parsed = parser.Feed(std::string_view(buf, static_cast<size_t>(n)));
    if (auto* err = std::get_if<net::HttpParseError>(&parsed)) {
      return DataLoss("etcd watch: " + err->message);
    }
    const auto* whole = std::get_if<net::HttpResponse>(&parsed);  // the stream ended
    if (whole == nullptr && !parser.headers_done()) continue;
    const int status = whole != nullptr ? whole->status : parser.head().status;
    if (status != 200) return Unavailable("etcd watch: HTTP " + std::to_string(status));
    lines += whole != nullptr ? whole->body : parser.TakeBody();
    VSC_ASSIGN_OR_RETURN(bool event, EventInLines(lines, what));
    if (event) return WatchEnd::kEvent;
    if (whole != nullptr) return Unavailable("etcd watch: the stream ended");
  }
}

}  // namespace vsc::director
