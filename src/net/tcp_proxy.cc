#include "net/tcp_proxy.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <asio/buffer.hpp>
#include <asio/experimental/as_tuple.hpp>
#include <asio/experimental/awaitable_operators.hpp>
#include <asio/steady_timer.hpp>
#include <asio/this_coro.hpp>
#include <asio/use_awaitable.hpp>
#include <cerrno>
#include <csignal>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "net/endpoint.h"

namespace vsc::net {
namespace {

using asio::ip::tcp;
constexpr auto kTuple = asio::experimental::as_tuple(asio::use_awaitable);
// Bytes moved per splice call: the default pipe capacity (16 pages).
constexpr size_t kSpliceChunk = 64 * 1024;
constexpr size_t kCopyBuffer = 16 * 1024;
// A direction's first buffer: room for a typical request or response. Only a read that fills
// it takes the full copy buffer, so a keep-alive connection that went idle after small messages
// holds 2 × 2 KiB, not 2 × 16 KiB.
constexpr size_t kFirstBuffer = 2 * 1024;

size_t CopySize(const ProxyOptions& o) { return std::min(o.splice_threshold, kCopyBuffer); }

bool WouldBlock(int err) { return err == EAGAIN || err == EWOULDBLOCK; }

class Pipe {
 public:
  Pipe() = default;
  ~Pipe() {
    if (r_ >= 0) ::close(r_);
    if (w_ >= 0) ::close(w_);
  }
  Pipe(const Pipe&) = delete;
  Pipe& operator=(const Pipe&) = delete;
  bool Open() {
    int fds[2];
    if (::pipe2(fds, O_NONBLOCK | O_CLOEXEC) != 0) return false;
    r_ = fds[0];
    w_ = fds[1];
    return true;
  }
  int r() const { return r_; }
  int w() const { return w_; }

 private:
  int r_ = -1;
  int w_ = -1;
};

struct Direction {
  const char* name;  // "a->b" for messages
  uint64_t bytes = 0;
  bool ended = false;  // EOF from its source: the far side's write half was shut down
  bool splicing = false;
  Pipe pipe;
  size_t in_pipe = 0;  // bytes read from src into the pipe, not yet written to dst
  std::vector<uint8_t> buf;
};

struct ProxyState {
  ProxyState(tcp::socket sa, tcp::socket sb, ProxyOptions o)
      : a(std::move(sa)), b(std::move(sb)), idle_timer(a.get_executor()), options(o) {
    dir[0].name = "a->b";
    dir[1].name = "b->a";
  }
  tcp::socket a;
  tcp::socket b;
  asio::steady_timer idle_timer;
  ProxyOptions options;
  Direction dir[2];
  uint64_t spliced = 0;
  uint64_t activity = 0;  // bumped on every transfer; the idle watch compares snapshots
  uint64_t activity_seen = 0;
  std::chrono::steady_clock::time_point last_active = std::chrono::steady_clock::now();
  bool closed = false;
  Status status;
};

constexpr int kQuietTicks = 4;

// Bytes written to the far side of direction d: the live meters see them at once.
void Meter(const ProxyOptions& o, int d, uint64_t n) {
  for (std::atomic<uint64_t>* m : o.live_bytes[d]) {
    if (m != nullptr) m->fetch_add(n, std::memory_order_relaxed);
  }
  for (std::atomic<uint64_t>* m : o.live_writes[d]) {
    if (m != nullptr) m->fetch_add(1, std::memory_order_relaxed);
  }
}

void CloseBoth(ProxyState& st, bool abortive) {
  if (st.closed) return;
  st.closed = true;
  asio::error_code ignored;
  for (tcp::socket* s : {&st.a, &st.b}) {
    // A failure on one side is reported to the other as a reset, not as a clean end of stream.
    if (abortive) s->set_option(asio::socket_base::linger(true, 0), ignored);
    s->close(ignored);
  }
  st.idle_timer.cancel();
}

void Fail(ProxyState& st, const char* side, const char* op, int err) {
  if (st.closed) return;
  st.status = ErrnoStatus(std::string("proxy ") + side + ": " + op, err);
  CloseBoth(st, /*abortive=*/true);
}

// No idle limit at or beyond this (a year): nothing to watch.
constexpr Duration kNoIdleLimit = std::chrono::hours(24 * 365);

// The idle limit that applies now (tcp_proxy.h).
Duration IdleLimit(const ProxyState& st) {
  if (!st.options.timeouts) return st.options.idle_timeout;
  const bool half_closed = st.dir[0].ended || st.dir[1].ended;
  return half_closed ? st.options.timeouts->tcpfin() : st.options.timeouts->tcp();
}

void ArmIdleWatch(std::shared_ptr<ProxyState> st) {
  const Duration limit = IdleLimit(*st);
  if (limit <= Duration::zero() || limit >= kNoIdleLimit) return;
  st->idle_timer.expires_after(
      std::max<Duration>(limit / kQuietTicks, std::chrono::milliseconds(1)));
  st->idle_timer.async_wait([st](const asio::error_code& ec) {
    if (ec || st->closed) return;
    const auto now = std::chrono::steady_clock::now();
    if (st->activity != st->activity_seen) {
      st->activity_seen = st->activity;
      st->last_active = now;
    }
    const Duration limit = IdleLimit(*st);
    if (limit > Duration::zero() && now - st->last_active >= limit) {
      const bool half_closed = st->dir[0].ended || st->dir[1].ended;
      st->status = Unavailable(
          "proxy: no traffic for " + std::to_string(static_cast<int64_t>(ToMillis(limit))) +
          " ms (" + (half_closed ? "half-closed" : "idle") + " timeout); connection closed");
      CloseBoth(*st, /*abortive=*/false);
      return;
    }
    ArmIdleWatch(st);
  });
}

// Writes buf[0, n) to dst, waiting for writability as needed. False when the proxy was closed
// under it or dst failed (then Fail was called).
asio::awaitable<bool> SendAll(std::shared_ptr<ProxyState> st, int d, size_t n) {
  Direction& dir = st->dir[d];
  tcp::socket& dst = d == 0 ? st->b : st->a;
  size_t off = 0;
  while (off < n) {
    if (st->closed) co_return false;
    ssize_t w =
        ::send(dst.native_handle(), dir.buf.data() + off, n - off, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (w > 0) {
      off += static_cast<size_t>(w);
      dir.bytes += static_cast<uint64_t>(w);
      Meter(st->options, d, static_cast<uint64_t>(w));
      ++st->activity;
      continue;
    }
    int err = errno;
    if (w < 0 && err == EINTR) continue;
    if (w < 0 && WouldBlock(err)) {
      co_await dst.async_wait(asio::socket_base::wait_write, kTuple);
      if (st->closed) co_return false;
      continue;
    }
    Fail(*st, dir.name, "send", w < 0 ? err : EPIPE);
    co_return false;
  }
  co_return true;
}

// Moves dir.in_pipe bytes from the pipe to dst.
asio::awaitable<bool> DrainPipe(std::shared_ptr<ProxyState> st, int d) {
  Direction& dir = st->dir[d];
  tcp::socket& dst = d == 0 ? st->b : st->a;
  while (dir.in_pipe > 0) {
    if (st->closed) co_return false;
    ssize_t m = ::splice(dir.pipe.r(), nullptr, dst.native_handle(), nullptr, dir.in_pipe,
                         SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
    if (m > 0) {
      dir.in_pipe -= static_cast<size_t>(m);
      dir.bytes += static_cast<uint64_t>(m);
      Meter(st->options, d, static_cast<uint64_t>(m));
      st->spliced += static_cast<uint64_t>(m);
      ++st->activity;
      continue;
    }
    int err = errno;
    if (m < 0 && err == EINTR) continue;
    if (m < 0 && WouldBlock(err)) {
      co_await dst.async_wait(asio::socket_base::wait_write, kTuple);
      if (st->closed) co_return false;
      continue;
    }
    Fail(*st, dir.name, "splice to socket", m < 0 ? err : EPIPE);
    co_return false;
  }
  co_return true;
}

// The copy path's next read: the first one waits for readability without a buffer, so a
// connection that never sends holds none; later ones are asio receives (speculative when the
// last event left data, else queued on the registered descriptor), which cost one recv(2) per
// message, where async_wait would add an epoll_ctl(2) re-arm and an EAGAIN recv(2) each.
// Returns the bytes read; 0 at EOF; -1 when the proxy closed or failed (Fail was called).
asio::awaitable<ssize_t> CopyRead(std::shared_ptr<ProxyState> st, int d, tcp::socket& src) {
  Direction& dir = st->dir[d];
  if (dir.buf.empty()) {
    co_await src.async_wait(asio::socket_base::wait_read, kTuple);
    if (st->closed) co_return -1;
    dir.buf.resize(std::min(CopySize(st->options), kFirstBuffer));
  }
  auto [ec, n] = co_await src.async_receive(asio::buffer(dir.buf), kTuple);
  if (st->closed) co_return -1;
  if (ec == asio::error::eof) co_return 0;
  if (ec) {
    Fail(*st, dir.name, "recv", ec.value());
    co_return -1;
  }
  co_return static_cast<ssize_t>(n);
}

// EOF on direction d's source: shut down its destination's write half; the connection is
// half-closed now, so the idle watch starts over with its (tcpfin) limit.
void EndDirection(const std::shared_ptr<ProxyState>& st, int d) {
  asio::error_code ignored;
  (d == 0 ? st->b : st->a).shutdown(tcp::socket::shutdown_send, ignored);
  st->dir[d].ended = true;
  if (!st->closed) ArmIdleWatch(st);  // expires_after cancels the wait in progress
}

// One direction: src → dst until EOF on src (then dst's write half is shut down) or failure.
asio::awaitable<void> Pump(std::shared_ptr<ProxyState> st, int d) {
  Direction& dir = st->dir[d];
  tcp::socket& src = d == 0 ? st->a : st->b;
  if (st->options.splice_threshold == 0) dir.splicing = dir.pipe.Open();
  for (;;) {
    if (st->closed) co_return;
    if (!dir.splicing) {
      const ssize_t n = co_await CopyRead(st, d, src);
      if (n < 0) co_return;
      if (n == 0) {
        EndDirection(st, d);
        co_return;
      }
      ++st->activity;
      if (!co_await SendAll(st, d, static_cast<size_t>(n))) co_return;
      if (static_cast<size_t>(n) < dir.buf.size()) continue;
      if (dir.buf.size() < CopySize(st->options)) {
        dir.buf.resize(CopySize(st->options));  // more than a small message
      } else if (dir.pipe.Open()) {
        // A full copy buffer means a bulk stream: stop copying it through user space. If
        // pipe2 fails (descriptor limit) the direction simply keeps copying.
        dir.splicing = true;
        std::vector<uint8_t>().swap(dir.buf);
      }
      continue;
    }
    // native_handle() is read at every call: after CloseBoth it is -1, never a reused number.
    const ssize_t n = ::splice(src.native_handle(), nullptr, dir.pipe.w(), nullptr, kSpliceChunk,
                               SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
    if (n > 0) {
      ++st->activity;
      dir.in_pipe = static_cast<size_t>(n);
      if (!co_await DrainPipe(st, d)) co_return;
      continue;
    }
    if (n == 0) {
      EndDirection(st, d);
      co_return;
    }
    int err = errno;
    if (err == EINTR) continue;
    if (WouldBlock(err)) {
      // The reactor is edge-triggered, so wait only after the kernel said "nothing left".
      co_await src.async_wait(asio::socket_base::wait_read, kTuple);
      continue;
    }
    Fail(*st, dir.name, "splice from socket", err);
    co_return;
  }
}

std::once_flag g_sigpipe_once;

void BindHandle(const std::shared_ptr<ProxyState>& st, ProxyHandle& handle) {
  std::weak_ptr<ProxyState> weak = st;
  handle.Bind(
      [weak](const std::string& reason) {
        auto s = weak.lock();
        if (!s || s->closed) return;
        s->status = Unavailable("proxy: closed by the director: " + reason);
        CloseBoth(*s, /*abortive=*/true);
      },
      [weak] {
        auto s = weak.lock();
        if (!s) return ProxyFlowState{};
        // Bytes moved since the last tick: active now.
        const Duration idle = s->activity != s->activity_seen
                                  ? Duration::zero()
                                  : Duration(std::chrono::steady_clock::now() - s->last_active);
        return ProxyFlowState{s->dir[0].ended || s->dir[1].ended, idle, IdleLimit(*s),
                              s->dir[0].buf.capacity() + s->dir[1].buf.capacity()};
      });
}

}  // namespace

void ProxyHandle::Close(const std::string& reason) {
  if (close_) {
    auto close = std::move(close_);
    close_ = nullptr;
    close(reason);
  } else if (!pending_) {
    pending_ = reason;
  }
}

void ProxyHandle::Bind(std::function<void(const std::string&)> close,
                       std::function<ProxyFlowState()> inspect) {
  close_ = std::move(close);
  inspect_ = std::move(inspect);
  if (pending_) Close(*std::exchange(pending_, std::nullopt));
}

asio::awaitable<ProxyResult> Proxy(tcp::socket a, tcp::socket b, ProxyOptions options) {
  using namespace asio::experimental::awaitable_operators;
  std::call_once(g_sigpipe_once, [] { std::signal(SIGPIPE, SIG_IGN); });

  auto st = std::make_shared<ProxyState>(std::move(a), std::move(b), options);
  asio::error_code ec;
  st->a.native_non_blocking(true, ec);
  if (!ec) st->b.native_non_blocking(true, ec);
  if (ec) {
    st->status = ErrnoStatus("proxy: set non-blocking", ec.value());
    CloseBoth(*st, /*abortive=*/true);
    co_return ProxyResult{0, 0, 0, st->status};
  }
  ArmIdleWatch(st);
  if (options.handle) BindHandle(st, *options.handle);
  co_await (Pump(st, 0) && Pump(st, 1));
  if (options.handle) options.handle->Unbind();

  CloseBoth(*st, /*abortive=*/false);
  co_return ProxyResult{st->dir[0].bytes, st->dir[1].bytes, st->spliced, st->status};
}

namespace {

struct ConnectState {
  explicit ConnectState(asio::any_io_executor ex) : socket(ex), timer(ex) {}
  tcp::socket socket;
  asio::steady_timer timer;
  bool done = false;
  bool timed_out = false;
};

}  // namespace

asio::awaitable<Result<tcp::socket>> Connect(asio::any_io_executor ex, tcp::endpoint ep,
                                             Duration timeout) {
  auto st = std::make_shared<ConnectState>(ex);
  asio::error_code open_ec;
  st->socket.open(ep.protocol(), open_ec);
  if (open_ec) {
    const int err = open_ec.value();
    if (err == EMFILE || err == ENFILE || err == ENOBUFS || err == ENOMEM) {
      co_return ResourceExhausted("connect " + ToString(ep) +
                                  ": no local socket: " + open_ec.message() +
                                  " (this process is out of descriptors or memory; the "
                                  "destination was not tried: raise `ulimit -n` or take fewer "
                                  "connections)");
    }
    co_return ErrnoStatus("connect " + ToString(ep) + ": socket", err);
  }
  st->timer.expires_after(timeout);
  st->timer.async_wait([st](const asio::error_code& ec) {
    if (ec || st->done) return;
    st->timed_out = true;
    asio::error_code ignored;
    st->socket.close(ignored);
  });
  auto [ec] = co_await st->socket.async_connect(ep, kTuple);
  st->done = true;
  st->timer.cancel();
  const std::string what = "connect " + ToString(ep);
  if (st->timed_out) {
    co_return Unavailable(what + ": no answer within " +
                          std::to_string(static_cast<int64_t>(ToMillis(timeout))) + " ms");
  }
  if (ec) co_return ErrnoStatus(what, ec.value());
  co_return std::move(st->socket);
}

}  // namespace vsc::net
