#include "net/http_server.h"

#include <array>
#include <asio/co_spawn.hpp>
#include <asio/detached.hpp>
#include <asio/ssl/stream.hpp>
#include <asio/steady_timer.hpp>
#include <asio/use_awaitable.hpp>
#include <asio/write.hpp>
#include <exception>
#include <type_traits>
#include <unordered_map>

#include "common/logging.h"
#include "net/as_tuple.h"
#include "net/tcp_listener.h"
#include "net/tls_context.h"

namespace vsc::net {
namespace {

using asio::ip::tcp;
// After an error response, how long and how much unread input the server drains before closing.
constexpr auto kLingerTime = std::chrono::seconds(2);
constexpr size_t kLingerBytes = 1024 * 1024;

using TlsStream = asio::ssl::stream<tcp::socket>;

// What the registry, the deadlines and the lingering close need of a session, whatever its
// stream: the TCP socket under it.
struct SessionBase {
  SessionBase(const asio::any_io_executor& ex, uint64_t session_id) : timer(ex), id(session_id) {}
  virtual ~SessionBase() = default;
  virtual tcp::socket& raw() = 0;
  asio::steady_timer timer;  // closes the socket when it fires: the idle / linger deadline
  uint64_t id;
};

inline tcp::socket& Raw(tcp::socket& s) { return s; }
inline tcp::socket& Raw(TlsStream& s) { return s.next_layer(); }

// Stream: tcp::socket (HTTP) or TlsStream (HTTPS).
template <class Stream>
struct Session : SessionBase {
  template <class... Args>
  Session(const asio::any_io_executor& ex, uint64_t session_id, Args&&... args)
      : SessionBase(ex, session_id), stream(std::forward<Args>(args)...) {}
  tcp::socket& raw() override { return Raw(stream); }
  Stream stream;
};

}  // namespace

struct HttpServer::State {
  HttpServer::Handler handler;
  HttpServer::AsyncHandler async_handler;  // used instead of `handler` when set
  HttpServerOptions options;
  bool stopped = false;
  uint64_t next_id = 0;
  std::unordered_map<uint64_t, std::shared_ptr<SessionBase>> sessions;
};

namespace {

void ArmDeadline(const std::shared_ptr<SessionBase>& s, Duration d) {
  s->timer.expires_after(d);
  std::weak_ptr<SessionBase> weak = s;
  s->timer.async_wait([weak](const asio::error_code& ec) {
    if (ec) return;
    if (auto p = weak.lock()) {
      asio::error_code ignored;
      p->raw().close(ignored);
    }
  });
}

// Half-closes, then reads and discards what the client is still sending, so that closing does
// not turn into a reset that destroys the error response in flight.
// On TLS the bytes drained are the raw records: they are discarded unread.
asio::awaitable<void> LingeringClose(std::shared_ptr<SessionBase> s) {
  asio::error_code ignored;
  s->raw().shutdown(tcp::socket::shutdown_send, ignored);
  ArmDeadline(s, kLingerTime);
  std::array<char, 4096> sink;
  size_t drained = 0;
  while (drained < kLingerBytes) {
    auto [ec, n] = co_await s->raw().async_read_some(asio::buffer(sink), kTuple);
    if (ec) break;
    drained += n;
  }
}

// Closes the session's socket and leaves the registry.
void EndSession(HttpServer::State& st, const std::shared_ptr<SessionBase>& s) {
  s->timer.cancel();
  asio::error_code ignored;
  s->raw().close(ignored);
  st.sessions.erase(s->id);
}

template <class Stream>
asio::awaitable<void> RunSession(std::shared_ptr<HttpServer::State> st,
                                 std::shared_ptr<Session<Stream>> s) {
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
        auto [cec, cn] = co_await asio::async_write(s->stream, asio::buffer(kContinue), kTuple);
        if (cec) {
          read_failed = true;
          break;
        }
      }
      auto [ec, n] = co_await s->stream.async_read_some(asio::buffer(buf), kTuple);
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
      if (resp.hand_over) {
        if constexpr (std::is_same_v<Stream, tcp::socket>) {
          s->timer.cancel();
          asio::error_code ec;
          const int fd = s->stream.release(ec);
          if (!ec) {
            resp.hand_over(fd);
            break;
          }
          resp = JsonError(500, "internal error: the connection could not be handed over");
        } else {
          resp = JsonError(500, "this answer cannot be sent over HTTPS; use plain HTTP");
        }
        keep_alive = false;
      }
      out = SerializeResponse(resp, keep_alive, !head);
    }
    ArmDeadline(s, st->options.idle_timeout);
    auto [wec, wn] = co_await asio::async_write(s->stream, asio::buffer(out), kTuple);
    if (wec || !keep_alive) break;
  }
  if (linger && !st->stopped && s->raw().is_open()) co_await LingeringClose(s);
  EndSession(*st, s);
}

// An HTTPS connection: plain HTTP is answered in plain text (the client could not read
// anything else), then the handshake, then the ordinary session over the TLS stream.
asio::awaitable<void> RunTlsSession(std::shared_ptr<HttpServer::State> st,
                                    std::shared_ptr<Session<TlsStream>> s) {
  ArmDeadline(s, st->options.request_timeout);
  unsigned char first = 0;
  auto [pec, pn] =
      co_await s->raw().async_receive(asio::buffer(&first, 1), tcp::socket::message_peek, kTuple);
  constexpr unsigned char kTlsHandshakeRecord = 0x16;
  if (pec || st->stopped) {
    EndSession(*st, s);
    co_return;
  }
  if (first != kTlsHandshakeRecord) {
    HttpResponse r;
    r.status = 400;
    r.content_type = "text/plain; charset=utf-8";
    r.body = "this port speaks HTTPS only: use https:// (plain HTTP was sent to a TLS port)\n";
    const std::string out = SerializeResponse(r, /*keep_alive=*/false);
    auto [wec, wn] = co_await asio::async_write(s->raw(), asio::buffer(out), kTuple);
    if (!wec && !st->stopped) co_await LingeringClose(s);
    EndSession(*st, s);
    co_return;
  }
  auto [hec] = co_await s->stream.async_handshake(asio::ssl::stream_base::server, kTuple);
  if (hec || st->stopped) {
    spdlog::debug("HTTPS handshake failed: {}", hec.message());
    EndSession(*st, s);
    co_return;
  }
  co_await RunSession(st, s);
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
    const asio::any_io_executor ex = socket.get_executor();
    const uint64_t id = st->next_id++;
    if (st->options.tls) {
      auto s = std::make_shared<Session<TlsStream>>(ex, id, std::move(socket),
                                                    st->options.tls->context());
      st->sessions.emplace(id, s);
      asio::co_spawn(ctx, RunTlsSession(st, s), asio::detached);
    } else {
      auto s = std::make_shared<Session<tcp::socket>>(ex, id, std::move(socket));
      st->sessions.emplace(id, s);
      asio::co_spawn(ctx, RunSession(st, s), asio::detached);
    }
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
    s->raw().close(ignored);
  }
}

size_t HttpServer::session_count() const { return state_->sessions.size(); }

}  // namespace vsc::net
