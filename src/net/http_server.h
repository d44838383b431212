// HttpServer: a small HTTP/1.1 server on one io_context, for the admin API (`GET /metrics`,
// `GET/POST /v1/...` with JSON) and the real server's `GET /v1/resources/ID,...`.
//
// Each connection is a session coroutine: read → parse (HttpRequestParser) → call the handler
// (or co_await the async one) → write the response → repeat while keep-alive. Pipelined requests
// are answered in order. A malformed request gets 400 (too large: 413 / 414 / 431, chunked: 411)
// with a JSON error body and the connection is closed after a lingering drain, so the client sees
// the answer instead of a reset. A handler that throws produces a 500. Idle connections are closed
// after `idle_timeout`.
//
// TLS: with `options.tls` every connection is HTTPS. A connection whose first byte is not a TLS
// handshake record (plain HTTP sent to the TLS port) gets a plain-text 400 saying to use
// https:// and is closed; a failed handshake closes the connection. The handshake must finish
// within `request_timeout`.
//
// Threads: the handler runs on the io_context's thread (one at a time if that context has one
// thread). Start(), Stop() and destruction must be called on the context's thread or while no
// thread runs it (post them otherwise).
// Lifecycle: the server owns an explicit registry of its sessions. Stop() closes the listener
// and every session; each session leaves the registry when its coroutine observes the close,
// i.e. once the context has run the cancelled operations: session_count() then reaches zero.
// Sessions hold the shared state, not the server, so destroying a stopped server is safe while
// their final handlers are still queued; the request handler is never called after Stop().
#pragma once

#include <asio/awaitable.hpp>
#include <asio/io_context.hpp>
#include <asio/ip/tcp.hpp>
#include <chrono>
#include <functional>
#include <memory>

#include "common/clock.h"
#include "common/status.h"
#include "net/http_parser.h"
#include "net/http_response.h"

namespace vsc::net {

class TcpListener;
class TlsServerContext;

struct HttpServerOptions {
  HttpLimits limits;
  Duration idle_timeout = std::chrono::seconds(60);
  // From a request's first byte to its last: a client that trickles a request (slowloris) is
  // closed when this passes, however often it sends a byte.
  Duration request_timeout = std::chrono::seconds(30);
  // Set: the port speaks HTTPS only (net/tls_context.h).
  std::shared_ptr<TlsServerContext> tls;
};

class HttpServer {
 public:
  using Handler = std::function<HttpResponse(const HttpRequest&)>;
  // A handler that answers later (it may wait for other work on the context). The request is
  // the handler's to keep; the session reads nothing more until the answer is written.
  using AsyncHandler = std::function<asio::awaitable<HttpResponse>(HttpRequest)>;

  HttpServer(asio::io_context& ctx, asio::ip::tcp::endpoint ep, Handler handler,
             bool reuse_port = false, HttpServerOptions options = {});
  HttpServer(asio::io_context& ctx, asio::ip::tcp::endpoint ep, AsyncHandler handler,
             HttpServerOptions options = {});
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds and starts accepting. kIo when the address cannot be bound; kFailedPrecondition
  // when already started.
  Status Start();
  // The bound port (useful with port 0); 0 before Start().
  uint16_t local_port() const;
  void Stop();
  size_t session_count() const;

  struct State;  // shared with the session coroutines

 private:
  asio::io_context& ctx_;
  asio::ip::tcp::endpoint endpoint_;
  bool reuse_port_;
  std::shared_ptr<State> state_;
  std::unique_ptr<TcpListener> listener_;
};

}  // namespace vsc::net
