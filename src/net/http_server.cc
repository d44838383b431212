#include "net/http_server.h"

#include <array>
#include <asio/co_spawn.hpp>
#include <asio/detached.hpp>
#include <asio/experimental/as_tuple.hpp>
#include <asio/steady_timer.hpp>
#include <asio/use_awaitable.hpp>
#include <asio/write.hpp>
#include <exception>
#include <unordered_map>

#include "common/logging.h"
#include "net/tcp_listener.h"

namespace vsc::net {
namespace {

using asio::ip::tcp;
constexpr auto kTuple = asio::experimental::as_tuple(asio::use_awaitable);
// After an error response, how long and how much unread input the server drains before closing.
constexpr auto kLingerTime = std::chrono::seconds(2);
constexpr size_t kLingerBytes = 1024 * 1024;

struct Session {
  Session(tcp::socket s, uint64_t session_id)
      : socket(std::move(s)), timer(socket.get_executor()), id(session_id) {}
  tcp::socket socket;
  asio::steady_timer timer;  // closes the socket when it fires: the idle / linger deadline
  uint64_t id;
};

}  // namespace

struct HttpServer::State {
  HttpServer::Handler handler;
  HttpServer::AsyncHandler async_handler;  // used instead of `handler` when set
  HttpServerOptions options;
  bool stopped = false;
  uint64_t next_id = 0;
  std::unordered_map<uint64_t, std::shared_ptr<Session>> sessions;
};

namespace {

void ArmDeadline(const std::shared_ptr<Session>& s, Duration d) {
  s->timer.expires_after(d);
  std::weak_ptr<Session> weak = s;
  s->timer.async_wait([weak](const asio::error_code& ec) {
    if (ec) return;
    if (auto p = weak.lock()) {
      asio::error_code ignored;
      p->socket.close(ignored);
    }
  });
}

// Half-closes, then reads and discards what the client is still sending, so that closing does
// not turn into a reset that destroys the error response in flight.
asio::awaitable<void> LingeringClose(std::shared_ptr<Session> s) {
  asio::error_code ignored;
  s->socket.shutdown(tcp::socket::shutdown_send, ignored);
  ArmDeadline(s, kLingerTime);
  std::array<char, 4096> sink;
  size_t drained = 0;
  while (drained < kLingerBytes) {
    auto [ec, n] = co_await s->socket.async_read_some(asio::buffer(sink), kTuple);
    if (ec) break;
    drained += n;
  }
}

asio::awaitable<void> RunSession(std::shared_ptr<HttpServer::State> st,
                                 std::shared_ptr<Session> s) {
  HttpRequestParser parser(st->options.limits);
  std::array<char, 16 * 1024> buf;
  bool linger = false;
  for (;;) {
    HttpParseResult r = parser.Next();
    bool read_failed = false;
    // Idle until the request's first byte, then the whole request must arrive in time.
    bool started = parser.buffered() > 0;
    bool continued = false;  // "100 Continue" sent for this request
    ArmDeadline(s, started ? st->options.request_timeout : st->options.idle_timeout);
    while (std::holds_alternative<HttpNeedMore>(r)) {
      if (!continued && parser.AwaitingContinue()) {
        continued = true;
        static constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
        auto [cec, cn] = co_await asio::async_write(s->socket, asio::buffer(kContinue), kTuple);
        if (cec) {
          read_failed = true;
          break;
        }
      }
      auto [ec, n] = co_await s->socket.async_read_some(asio::buffer(buf), kTuple);
      if (ec || st->stopped) {
        read_failed = true;
        break;
      }
      if (!started) {
        started = true;
        ArmDeadline(s, st->options.request_timeout);
      }
      r = parser.Feed(std::string_view(buf.data(), n));
    }
    if (read_failed || st->stopped) break;

    std::string out;
    bool keep_alive = false;
    if (auto* err = std::get_if<HttpParseError>(&r)) {
      out = SerializeResponse(JsonError(err->status, err->message), /*keep_alive=*/false);
      linger = true;
    } else {
      HttpRequest& req = std::get<HttpRequest>(r);
      const bool req_keep_alive = req.keep_alive;
      const bool head = req.method == "HEAD";
      const std::string method = req.method, target = req.target;
      HttpResponse resp;
      std::string failure;
      try {
        if (st->async_handler) {
          s->timer.cancel();  // the handler bounds its own wait
          resp = co_await st->async_handler(std::move(req));
        } else {
          resp = st->handler(req);
        }
      } catch (const std::exception& e) {
        failure = e.what();
      }
      if (!failure.empty()) {
        spdlog::error("HTTP {} {}: handler threw: {}", method, target, failure);
        resp = JsonError(500, "internal error: " + failure);
      }
      keep_alive = req_keep_alive && !st->stopped;
      out = SerializeResponse(resp, keep_alive, !head);
    }
    ArmDeadline(s, st->options.idle_timeout);
    auto [wec, wn] = co_await asio::async_write(s->socket, asio::buffer(out), kTuple);
    if (wec || !keep_alive) break;
  }
  if (linger && !st->stopped && s->socket.is_open()) co_await LingeringClose(s);
  s->timer.cancel();
  asio::error_code ignored;
  s->socket.close(ignored);
  st->sessions.erase(s->id);
}

}  // namespace

HttpServer::HttpServer(asio::io_context& ctx, tcp::endpoint ep, Handler handler, bool reuse_port,
                       HttpServerOptions options)
    : ctx_(ctx), endpoint_(ep), reuse_port_(reuse_port), state_(std::make_shared<State>()) {
  state_->handler = std::move(handler);
  state_->options = options;
}

HttpServer::HttpServer(asio::io_context& ctx, tcp::endpoint ep, AsyncHandler handler,
                       HttpServerOptions options)
    : ctx_(ctx), endpoint_(ep), reuse_port_(false), state_(std::make_shared<State>()) {
  state_->async_handler = std::move(handler);
  state_->options = options;
}

HttpServer::~HttpServer() { Stop(); }

Status HttpServer::Start() {
  if (listener_) return FailedPrecondition("HTTP server already started");
  VSC_ASSIGN_OR_RETURN(listener_, TcpListener::Listen(ctx_, endpoint_, reuse_port_));
  state_->stopped = false;
  std::shared_ptr<State> st = state_;
  asio::io_context& ctx = ctx_;
  listener_->Start([st, &ctx](tcp::socket socket) {
    if (st->stopped) return;
    asio::error_code ignored;
    socket.set_option(tcp::no_delay(true), ignored);
    auto s = std::make_shared<Session>(std::move(socket), st->next_id++);
    st->sessions.emplace(s->id, s);
    asio::co_spawn(ctx, RunSession(st, s), asio::detached);
  });
  return Status::Ok();
}

uint16_t HttpServer::local_port() const { return listener_ ? listener_->local_port() : 0; }

void HttpServer::Stop() {
  state_->stopped = true;
  if (listener_) listener_->Stop();
  for (auto& [id, s] : state_->sessions) {
    asio::error_code ignored;
    s->timer.cancel();
    s->socket.close(ignored);
  }
}

size_t HttpServer::session_count() const { return state_->sessions.size(); }

}  // namespace vsc::net
