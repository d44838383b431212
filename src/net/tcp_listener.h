// TcpListener: an accept loop on one io_context, handing each connected socket to a callback.
//
// Owned by one worker; Listen() may run on any thread, Start() before the context runs or on its
// thread, Stop() and destruction on the context's thread or while no thread runs it. Accepted
// sockets belong to the same context.
//
// Out of descriptors (EMFILE, ENFILE): a client must not hang in the backlog until one frees.
// The listener holds one spare descriptor (/dev/null); it closes it, accepts the waiting
// connection, resets it at once (RST: "connection refused" to the client, not a hang), reopens
// the spare and reports the refusal (on_refused). Without a spare to give up, and on ENOBUFS /
// ENOMEM, it pauses accepting for 50 ms instead of spinning. Other per-connection failures
// (ECONNABORTED) are skipped.
#pragma once

#include <asio/io_context.hpp>
#include <asio/ip/tcp.hpp>
#include <asio/steady_timer.hpp>
#include <functional>
#include <memory>

#include "common/status.h"
#include "common/unique_fd.h"

namespace vsc::net {

class TcpListener {
 public:
  using AcceptHandler = std::function<void(asio::ip::tcp::socket)>;
  using RefusedHandler = std::function<void()>;

  // Binds and listens (SO_REUSEADDR always, SO_REUSEPORT when asked). Fails with kIo naming the
  // endpoint: "listen 127.0.0.1:8080: Address already in use".
  static Result<std::unique_ptr<TcpListener>> Listen(asio::io_context& ctx,
                                                     const asio::ip::tcp::endpoint& ep,
                                                     bool reuse_port);
  ~TcpListener();
  TcpListener(const TcpListener&) = delete;
  TcpListener& operator=(const TcpListener&) = delete;

  uint16_t local_port() const;
  // `on_refused` (optional): a connection was refused for lack of descriptors.
  void Start(AcceptHandler on_accept, RefusedHandler on_refused = nullptr);
  // Closes the listening socket; connections already accepted are not touched.
  void Stop();

 private:
  explicit TcpListener(asio::io_context& ctx);
  void Accept();
  // Out of descriptors: refuses one waiting connection through the spare. False when it could
  // not (no spare, or the accept failed again).
  bool RefuseOne();

  asio::ip::tcp::acceptor acceptor_;
  asio::steady_timer backoff_;
  AcceptHandler on_accept_;
  RefusedHandler on_refused_;
  UniqueFd spare_;
  uint16_t port_ = 0;
  bool running_ = false;
  std::shared_ptr<int> alive_ = std::make_shared<int>(0);
};

}  // namespace vsc::net
