// Test helpers for the network layer: an io_context on a background thread, running work on it
// synchronously, and blocking POSIX client sockets with receive deadlines.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <asio/executor_work_guard.hpp>
#include <asio/io_context.hpp>
#include <asio/post.hpp>
#include <asio/steady_timer.hpp>
#include <cerrno>
#include <chrono>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>

namespace vsc::net::testing {

// Runs an io_context on its own thread until destroyed: its own, or the caller's `ctx` (which
// must outlive it; it is left stopped, so a later run needs restart()).
class ContextThread {
 public:
  ContextThread() : owned_(std::make_unique<asio::io_context>(1)), ctx_(*owned_) {}
  explicit ContextThread(asio::io_context& ctx) : ctx_(ctx) {}
  ~ContextThread() {
    guard_.reset();
    ctx_.stop();
    thread_.join();
  }
  asio::io_context& ctx() { return ctx_; }

  // Runs f on the context's thread and waits for it (at most 10 s).
  template <class F>
  auto Run(F f) -> decltype(f()) {
    std::packaged_task<decltype(f())()> task(std::move(f));
    auto fut = task.get_future();
    asio::post(ctx_, [&task] { task(); });
    if (fut.wait_for(std::chrono::seconds(10)) != std::future_status::ready) {
      throw std::runtime_error("task on io_context did not finish within 10 s");
    }
    return fut.get();
  }

 private:
  std::unique_ptr<asio::io_context> owned_;
  asio::io_context& ctx_;
  asio::executor_work_guard<asio::io_context::executor_type> guard_{ctx_.get_executor()};
  std::thread thread_{[this] { ctx_.run(); }};
};

// Waits until pred() holds. pred is evaluated on the context's thread whenever a 1 ms timer
// on that context fires; the test thread blocks on a future with a deadline. False on timeout.
inline bool WaitOn(ContextThread& t, std::function<bool()> pred,
                   std::chrono::milliseconds deadline = std::chrono::seconds(10)) {
  auto done = std::make_shared<std::promise<void>>();
  auto fut = done->get_future();
  auto timer = std::make_shared<asio::steady_timer>(t.ctx());
  auto check = std::make_shared<std::function<void()>>();
  auto fired = std::make_shared<bool>(false);
  *check = [done, timer, check, fired, pred] {
    if (*fired) return;
    if (pred()) {
      *fired = true;
      done->set_value();
      return;
    }
    timer->expires_after(std::chrono::milliseconds(1));
    timer->async_wait([check](const asio::error_code& ec) {
      if (!ec) (*check)();
    });
  };
  asio::post(t.ctx(), [check] { (*check)(); });
  bool ok = fut.wait_for(deadline) == std::future_status::ready;
  t.Run([&] {
    *fired = true;
    timer->cancel();
  });
  // Breaks the check → check reference cycle once no handler can run it any more.
  t.Run([&] { *check = nullptr; });
  return ok;
}

inline sockaddr_in Loopback(uint16_t port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return a;
}

inline void SetRecvTimeout(int fd, std::chrono::milliseconds d) {
  timeval tv{};
  tv.tv_sec = d.count() / 1000;
  tv.tv_usec = (d.count() % 1000) * 1000;
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
}

// A blocking TCP client connected to 127.0.0.1:port, reads time out after 10 s. -1 on failure.
inline int ConnectTcp(uint16_t port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a = Loopback(port);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) {
    ::close(fd);
    return -1;
  }
  SetRecvTimeout(fd, std::chrono::seconds(10));
  return fd;
}

inline bool SendAllFd(int fd, const void* data, size_t n) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    ssize_t w = ::send(fd, p, n, MSG_NOSIGNAL);
    if (w <= 0) return false;
    p += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

inline bool SendAllFd(int fd, const std::string& s) { return SendAllFd(fd, s.data(), s.size()); }

// Reads exactly n bytes; fewer when the peer closes or the receive deadline passes.
inline std::string RecvExactly(int fd, size_t n) {
  std::string out;
  out.resize(n);
  size_t got = 0;
  while (got < n) {
    ssize_t r = ::recv(fd, out.data() + got, n - got, 0);
    if (r <= 0) break;
    got += static_cast<size_t>(r);
  }
  out.resize(got);
  return out;
}

// How late a timer or a socket event may be on a loaded 2-core machine running `ctest -j 2`
// beside the process-heavy integration suites: the upper bound a test adds to a configured
// deadline when it asserts that something happened "within" it.
inline constexpr std::chrono::milliseconds kSchedulingSlack{1000};

// Reads until the peer closes the connection. The bytes received before the close, or nullopt
// when the socket's receive deadline passed first (or recv failed otherwise): a test that
// expects a close must fail on a stall, not mistake the timeout for the close. With
// `reset_is_close`, a reset (ECONNRESET) also counts as a close; otherwise only an orderly
// end of stream (FIN) does.
inline std::optional<std::string> RecvUntilClosed(int fd, bool reset_is_close = false) {
  std::string out;
  char buf[16384];
  for (;;) {
    ssize_t r = ::recv(fd, buf, sizeof(buf), 0);
    if (r == 0) return out;
    if (r < 0) {
      if (errno == EINTR) continue;
      if (errno == ECONNRESET && reset_is_close) return out;
      return std::nullopt;
    }
    out.append(buf, static_cast<size_t>(r));
  }
}

}  // namespace vsc::net::testing
