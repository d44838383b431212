#include "net/tcp_proxy.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <asio/async_result.hpp>
#include <asio/buffer.hpp>
#include <asio/post.hpp>
#include <asio/steady_timer.hpp>
#include <asio/use_awaitable.hpp>
#include <cerrno>
#include <csignal>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "net/would_block.h"

namespace vsc::net {
namespace {

using asio::ip::tcp;
// Bytes moved per splice call: the default pipe capacity (16 pages).
constexpr size_t kSpliceChunk = 64 * 1024;
// Splice calls a direction makes before it lets the worker's other connections run.
constexpr int kSpliceBudget = 16;
constexpr size_t kCopyBuffer = 16 * 1024;
// Where a direction's asio receives land (allocated at its first byte): room for a typical
// request or response; a read that fills it goes on into the worker's scratch buffer.
constexpr size_t kLanding = 512;
constexpr int kQuietTicks = 4;
// No idle limit at or beyond this (a year): nothing to watch.
constexpr Duration kNoIdleLimit = std::chrono::hours(24 * 365);

size_t CopySize(const ProxyOptions& o) { return std::min(o.splice_threshold, kCopyBuffer); }

// The worker thread's copy buffer: synchronous reads land here, and whatever the destination
// does not take at once is copied out before the handler returns, so one buffer serves every
// connection of the thread.
uint8_t* Scratch() {
  thread_local std::array<uint8_t, kCopyBuffer> buf;
  return buf.data();
}

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
  bool ended = false;   // EOF from its source: the far side's write half was shut down
  bool running = true;  // an operation is outstanding or its code runs; false once it stopped
  bool splicing = false;
  Pipe pipe;
  size_t in_pipe = 0;  // bytes read from src into the pipe, not yet written to dst
  std::unique_ptr<uint8_t[]> landing;
  std::vector<uint8_t> pending;  // read, not yet taken by dst (it was full); freed once sent
  size_t pending_off = 0;
  size_t Held() const { return (landing ? kLanding : 0) + pending.capacity(); }
};

// One proxied connection: two directions, each a chain of asio handlers (no coroutine, so an
// idle connection costs its state and two pending waits, not coroutine frames).
class Engine final : public ProxyControl, public std::enable_shared_from_this<Engine> {
 public:
  Engine(tcp::socket a, tcp::socket b, ProxyOptions o, ProxyDone done)
      : a_(std::move(a)),
        b_(std::move(b)),
        idle_timer_(a_.get_executor()),
        options_(std::move(o)),
        done_(std::move(done)) {
    dir_[0].name = "a->b";
    dir_[1].name = "b->a";
  }
  void Start();
  void CloseFlow(const std::string& reason) override;
  ProxyFlowState Inspect() const override;

 private:
  tcp::socket& Src(int d) { return d == 0 ? a_ : b_; }
  tcp::socket& Dst(int d) { return d == 0 ? b_ : a_; }
  size_t LandingSize() const { return std::min(kLanding, CopySize(options_)); }

  void WaitReadable(int d);
  void Receive(int d);
  void OnReceived(int d, const asio::error_code& ec, size_t n);
  bool ReadMore(int d);
  bool Forward(int d, const uint8_t* data, size_t n);
  void WaitWritable(int d);
  void OnWritable(int d);
  bool StartSplicing(int d);
  void SpliceIn(int d);
  bool DrainPipe(int d);
  void Account(int d, size_t n);
  void EndDirection(int d);
  void Stop(int d);
  void Finish();
  void Fail(int d, const char* op, int err);
  void CloseBoth(bool abortive);
  Duration IdleLimit() const;
  void ArmIdleWatch();
  void OnIdleTick();

  tcp::socket a_;
  tcp::socket b_;
  asio::steady_timer idle_timer_;
  ProxyOptions options_;
  ProxyDone done_;
  Direction dir_[2];
  uint64_t spliced_ = 0;
  uint64_t activity_ = 0;  // bumped on every transfer; the idle watch compares snapshots
  uint64_t activity_seen_ = 0;
  std::chrono::steady_clock::time_point last_active_ = std::chrono::steady_clock::now();
  bool closed_ = false;
  bool finished_ = false;
  Status status_;
};

void Engine::Start() {
  asio::error_code ec;
  a_.native_non_blocking(true, ec);
  if (!ec) b_.native_non_blocking(true, ec);
  if (ec) {
    status_ = ErrnoStatus("proxy: set non-blocking", ec.value());
    CloseBoth(/*abortive=*/true);
    // Not from inside StartProxy: the owner hears of the end from the executor, as always.
    asio::post(idle_timer_.get_executor(), [self = shared_from_this()] {
      self->Stop(0);
      self->Stop(1);
    });
    return;
  }
  ArmIdleWatch();
  if (options_.handle) options_.handle->Bind(weak_from_this());
  for (int d : {0, 1}) {
    if (options_.splice_threshold == 0) dir_[d].splicing = dir_[d].pipe.Open();
    WaitReadable(d);
  }
}

// The first wait of a direction holds no buffer, so a connection that never sends costs none.
void Engine::WaitReadable(int d) {
  Src(d).async_wait(tcp::socket::wait_read,
                    [self = shared_from_this(), d](const asio::error_code&) {
                      if (self->closed_) return self->Stop(d);
                      if (self->dir_[d].splicing) return self->SpliceIn(d);
                      self->dir_[d].landing = std::make_unique<uint8_t[]>(kLanding);
                      self->Receive(d);
                    });
}

// Later reads are asio receives: the reactor reads when the socket becomes readable (one
// recv(2) per message, and none that returns EAGAIN after a short read), where a wait would
// re-arm the descriptor (epoll_ctl(2)) every time.
void Engine::Receive(int d) {
  Src(d).async_receive(asio::buffer(dir_[d].landing.get(), LandingSize()),
                       [self = shared_from_this(), d](const asio::error_code& ec, size_t n) {
                         self->OnReceived(d, ec, n);
                       });
}

void Engine::OnReceived(int d, const asio::error_code& ec, size_t n) {
  if (closed_) return Stop(d);
  if (ec == asio::error::eof) return EndDirection(d);
  if (ec) {
    Fail(d, "recv", ec.value());
    return Stop(d);
  }
  ++activity_;
  if (!Forward(d, dir_[d].landing.get(), n)) return;
  if (n == LandingSize()) {
    // The landing filled: more may be waiting. A full copy-sized read is a bulk stream.
    const bool go_on = LandingSize() == CopySize(options_) ? StartSplicing(d) : ReadMore(d);
    if (!go_on) return;
  }
  Receive(d);
}

// Reads what the source holds into the scratch buffer and forwards it. True: carry on with the
// next receive; false: the direction waits for its destination, splices, or stopped.
bool Engine::ReadMore(int d) {
  const size_t cap = CopySize(options_);
  for (;;) {
    // native_handle() is read at every call: after CloseBoth it is -1, never a reused number.
    const ssize_t m = ::recv(Src(d).native_handle(), Scratch(), cap, MSG_DONTWAIT);
    if (m > 0) {
      ++activity_;
      if (!Forward(d, Scratch(), static_cast<size_t>(m))) return false;
      if (static_cast<size_t>(m) < cap) return true;
      // A full copy buffer: a bulk stream. Without a pipe (descriptor limit) the direction
      // simply keeps copying, one receive at a time.
      return StartSplicing(d);
    }
    if (m == 0) {
      EndDirection(d);
      return false;
    }
    const int err = errno;
    if (err == EINTR) continue;
    if (WouldBlock(err)) return true;
    Fail(d, "recv", err);
    Stop(d);
    return false;
  }
}

// Sends data[0, n) to the direction's destination. What it does not take now is kept in
// `pending` and sent when it is writable again (the direction reads nothing meanwhile: that is
// the backpressure). True when all was sent.
bool Engine::Forward(int d, const uint8_t* data, size_t n) {
  size_t off = 0;
  while (off < n) {
    const ssize_t w =
        ::send(Dst(d).native_handle(), data + off, n - off, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (w > 0) {
      off += static_cast<size_t>(w);
      Account(d, static_cast<size_t>(w));
      continue;
    }
    const int err = errno;
    if (w < 0 && err == EINTR) continue;
    if (w < 0 && WouldBlock(err)) {
      dir_[d].pending.assign(data + off, data + n);
      dir_[d].pending_off = 0;
      WaitWritable(d);
      return false;
    }
    Fail(d, "send", w < 0 ? err : EPIPE);
    Stop(d);
    return false;
  }
  return true;
}

void Engine::WaitWritable(int d) {
  Dst(d).async_wait(tcp::socket::wait_write,
                    [self = shared_from_this(), d](const asio::error_code&) {
                      if (self->closed_) return self->Stop(d);
                      self->OnWritable(d);
                    });
}

void Engine::OnWritable(int d) {
  Direction& dir = dir_[d];
  if (dir.splicing) {
    if (DrainPipe(d)) SpliceIn(d);
    return;
  }
  while (dir.pending_off < dir.pending.size()) {
    const ssize_t w = ::send(Dst(d).native_handle(), dir.pending.data() + dir.pending_off,
                             dir.pending.size() - dir.pending_off, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (w > 0) {
      dir.pending_off += static_cast<size_t>(w);
      Account(d, static_cast<size_t>(w));
      continue;
    }
    const int err = errno;
    if (w < 0 && err == EINTR) continue;
    if (w < 0 && WouldBlock(err)) return WaitWritable(d);
    Fail(d, "send", w < 0 ? err : EPIPE);
    return Stop(d);
  }
  std::vector<uint8_t>().swap(dir.pending);
  dir.pending_off = 0;
  Receive(d);  // asio knows whether the source became readable meanwhile
}

// A bulk stream: stop copying it through user space. False when the direction now splices
// (it carries on there); true when no pipe could be made (descriptor limit): keep copying.
bool Engine::StartSplicing(int d) {
  Direction& dir = dir_[d];
  if (!dir.pipe.Open()) return true;
  dir.splicing = true;
  dir.landing.reset();
  SpliceIn(d);
  return false;
}

// splice(2) source → pipe → destination until the source would block.
void Engine::SpliceIn(int d) {
  Direction& dir = dir_[d];
  for (int budget = kSpliceBudget; budget > 0; --budget) {
    if (closed_) return Stop(d);
    const ssize_t n = ::splice(Src(d).native_handle(), nullptr, dir.pipe.w(), nullptr, kSpliceChunk,
                               SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
    if (n > 0) {
      ++activity_;
      dir.in_pipe = static_cast<size_t>(n);
      if (!DrainPipe(d)) return;
      continue;
    }
    if (n == 0) return EndDirection(d);
    const int err = errno;
    if (err == EINTR) continue;
    if (WouldBlock(err)) {
      // The reactor is edge-triggered, so wait only after the kernel said "nothing left".
      Src(d).async_wait(
          tcp::socket::wait_read,
          [self = shared_from_this(), d](const asio::error_code&) { self->SpliceIn(d); });
      return;
    }
    Fail(d, "splice from socket", err);
    return Stop(d);
  }
  asio::post(idle_timer_.get_executor(), [self = shared_from_this(), d] { self->SpliceIn(d); });
}

// Moves dir.in_pipe bytes from the pipe to dst. False when it waits for dst or stopped.
bool Engine::DrainPipe(int d) {
  Direction& dir = dir_[d];
  while (dir.in_pipe > 0) {
    const ssize_t m = ::splice(dir.pipe.r(), nullptr, Dst(d).native_handle(), nullptr, dir.in_pipe,
                               SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
    if (m > 0) {
      dir.in_pipe -= static_cast<size_t>(m);
      spliced_ += static_cast<uint64_t>(m);
      Account(d, static_cast<size_t>(m));
      continue;
    }
    const int err = errno;
    if (m < 0 && err == EINTR) continue;
    if (m < 0 && WouldBlock(err)) {
      WaitWritable(d);
      return false;
    }
    Fail(d, "splice to socket", m < 0 ? err : EPIPE);
    Stop(d);
    return false;
  }
  return true;
}

// Bytes written to the far side of direction d: the live meters see them at once.
void Engine::Account(int d, size_t n) {
  dir_[d].bytes += n;
  ++activity_;
  for (std::atomic<uint64_t>* m : options_.live_bytes[d]) {
    if (m != nullptr) m->fetch_add(n, std::memory_order_relaxed);
  }
  for (std::atomic<uint64_t>* m : options_.live_writes[d]) {
    if (m != nullptr) m->fetch_add(1, std::memory_order_relaxed);
  }
}

// EOF on direction d's source: shut down its destination's write half; the connection is
// half-closed now, so the idle watch starts over with its (tcpfin) limit.
void Engine::EndDirection(int d) {
  asio::error_code ignored;
  Dst(d).shutdown(tcp::socket::shutdown_send, ignored);
  dir_[d].ended = true;
  dir_[d].landing.reset();
  if (!closed_) ArmIdleWatch();  // expires_after cancels the wait in progress
  Stop(d);
}

void Engine::Stop(int d) {
  dir_[d].running = false;
  if (!dir_[0].running && !dir_[1].running) Finish();
}

void Engine::Finish() {
  if (finished_) return;
  finished_ = true;
  CloseBoth(/*abortive=*/false);
  if (options_.handle) options_.handle->Unbind();
  ProxyDone done = std::move(done_);
  if (done) done(ProxyResult{dir_[0].bytes, dir_[1].bytes, spliced_, status_});
}

void Engine::Fail(int d, const char* op, int err) {
  if (closed_) return;
  status_ = ErrnoStatus(std::string("proxy ") + dir_[d].name + ": " + op, err);
  CloseBoth(/*abortive=*/true);
}

// Closing the sockets ends every wait in progress; their handlers see closed_ and stop.
void Engine::CloseBoth(bool abortive) {
  if (closed_) return;
  closed_ = true;
  asio::error_code ignored;
  for (tcp::socket* s : {&a_, &b_}) {
    // A failure on one side is reported to the other as a reset, not as a clean end of stream.
    if (abortive) s->set_option(asio::socket_base::linger(true, 0), ignored);
    s->close(ignored);
  }
  idle_timer_.cancel();
}

// The idle limit that applies now (tcp_proxy.h).
Duration Engine::IdleLimit() const {
  if (!options_.timeouts) return options_.idle_timeout;
  const bool half_closed = dir_[0].ended || dir_[1].ended;
  return half_closed ? options_.timeouts->tcpfin() : options_.timeouts->tcp();
}

void Engine::ArmIdleWatch() {
  const Duration limit = IdleLimit();
  if (limit <= Duration::zero() || limit >= kNoIdleLimit) return;
  idle_timer_.expires_after(std::max<Duration>(limit / kQuietTicks, std::chrono::milliseconds(1)));
  idle_timer_.async_wait([self = shared_from_this()](const asio::error_code& ec) {
    if (!ec && !self->closed_) self->OnIdleTick();
  });
}

void Engine::OnIdleTick() {
  const auto now = std::chrono::steady_clock::now();
  if (activity_ != activity_seen_) {
    activity_seen_ = activity_;
    last_active_ = now;
  }
  const Duration limit = IdleLimit();
  if (limit > Duration::zero() && now - last_active_ >= limit) {
    const bool half_closed = dir_[0].ended || dir_[1].ended;
    status_ = Unavailable("proxy: no traffic for " +
                          std::to_string(static_cast<int64_t>(ToMillis(limit))) + " ms (" +
                          (half_closed ? "half-closed" : "idle") + " timeout); connection closed");
    CloseBoth(/*abortive=*/false);
    return;
  }
  ArmIdleWatch();
}

void Engine::CloseFlow(const std::string& reason) {
  if (closed_) return;
  status_ = Unavailable("proxy: closed by the director: " + reason);
  CloseBoth(/*abortive=*/true);
}

ProxyFlowState Engine::Inspect() const {
  // Bytes moved since the last tick: active now.
  const Duration idle = activity_ != activity_seen_
                            ? Duration::zero()
                            : Duration(std::chrono::steady_clock::now() - last_active_);
  return ProxyFlowState{dir_[0].ended || dir_[1].ended, idle, IdleLimit(),
                        dir_[0].Held() + dir_[1].Held()};
}

std::once_flag g_sigpipe_once;

}  // namespace

void ProxyHandle::Close(const std::string& reason) {
  if (auto control = control_.lock()) {
    control_.reset();
    control->CloseFlow(reason);
  } else if (!pending_) {
    pending_ = reason;
  }
}

std::optional<ProxyFlowState> ProxyHandle::Inspect() const {
  auto control = control_.lock();
  if (!control) return std::nullopt;
  return control->Inspect();
}

void ProxyHandle::Bind(std::weak_ptr<ProxyControl> control) {
  control_ = std::move(control);
  if (pending_) Close(*std::exchange(pending_, std::nullopt));
}

void StartProxy(tcp::socket a, tcp::socket b, ProxyOptions options, ProxyDone done) {
  std::call_once(g_sigpipe_once, [] { std::signal(SIGPIPE, SIG_IGN); });
  std::make_shared<Engine>(std::move(a), std::move(b), std::move(options), std::move(done))
      ->Start();
}

asio::awaitable<ProxyResult> Proxy(tcp::socket a, tcp::socket b, ProxyOptions options) {
  co_return co_await asio::async_initiate<const asio::use_awaitable_t<>&, void(ProxyResult)>(
      [](auto handler, tcp::socket a, tcp::socket b, ProxyOptions o) {
        auto h = std::make_shared<decltype(handler)>(std::move(handler));
        StartProxy(std::move(a), std::move(b), std::move(o),
                   [h](ProxyResult r) { (*h)(std::move(r)); });
      },
      asio::use_awaitable, std::move(a), std::move(b), std::move(options));
}

}  // namespace vsc::net
