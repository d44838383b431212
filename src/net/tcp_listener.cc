#include "net/tcp_listener.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>

#include "common/logging.h"
#include "net/endpoint.h"

namespace vsc::net {

namespace {
int OpenSpare() { return ::open("/dev/null", O_RDONLY | O_CLOEXEC); }
}  // namespace

TcpListener::TcpListener(asio::io_context& ctx)
    : acceptor_(ctx), backoff_(ctx), spare_(OpenSpare()) {}

TcpListener::~TcpListener() { Stop(); }

Result<std::unique_ptr<TcpListener>> TcpListener::Listen(asio::io_context& ctx,
                                                         const asio::ip::tcp::endpoint& ep,
                                                         bool reuse_port) {
  std::unique_ptr<TcpListener> l(new TcpListener(ctx));
  const std::string what = "listen " + ToString(ep);
  asio::error_code ec;
  l->acceptor_.open(ep.protocol(), ec);
  if (ec) return ErrnoStatus(what, ec.value());
  l->acceptor_.set_option(asio::socket_base::reuse_address(true), ec);
  if (ec) return ErrnoStatus(what + " (SO_REUSEADDR)", ec.value());
  if (reuse_port) {
    int one = 1;
    if (::setsockopt(l->acceptor_.native_handle(), SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) !=
        0) {
      return ErrnoStatus(what + " (SO_REUSEPORT)", errno);
    }
  }
  l->acceptor_.bind(ep, ec);
  if (ec) return ErrnoStatus(what, ec.value());
  l->acceptor_.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) return ErrnoStatus(what, ec.value());
  l->port_ = l->acceptor_.local_endpoint(ec).port();
  return l;
}

uint16_t TcpListener::local_port() const { return port_; }

void TcpListener::Start(AcceptHandler on_accept, RefusedHandler on_refused) {
  on_accept_ = std::move(on_accept);
  on_refused_ = std::move(on_refused);
  running_ = true;
  Accept();
}

void TcpListener::Stop() {
  running_ = false;
  asio::error_code ignored;
  backoff_.cancel();
  acceptor_.close(ignored);
}

void TcpListener::Accept() {
  std::weak_ptr<int> alive = alive_;
  acceptor_.async_accept([this, alive](const asio::error_code& ec, asio::ip::tcp::socket s) {
    if (alive.expired() || !running_) return;
    if (!ec) {
      on_accept_(std::move(s));
      if (alive.expired() || !running_) return;  // the callback stopped or destroyed us
      Accept();
      return;
    }
    if (ec == asio::error::operation_aborted) return;
    const int err = ec.value();
    if ((err == EMFILE || err == ENFILE) && RefuseOne()) {
      if (on_refused_) on_refused_();
      if (alive.expired() || !running_) return;
      Accept();
      return;
    }
    if (err == EMFILE || err == ENFILE || err == ENOBUFS || err == ENOMEM) {
      // Out of descriptors or memory: accepting again at once would fail again at once.
      spdlog::warn("accept on port {}: {}; pausing 50 ms", port_, ec.message());
      backoff_.expires_after(std::chrono::milliseconds(50));
      backoff_.async_wait([this, alive](const asio::error_code& tec) {
        if (alive.expired() || tec || !running_) return;
        Accept();
      });
      return;
    }
    Accept();
  });
}

bool TcpListener::RefuseOne() {
  if (!spare_.valid()) spare_.Reset(OpenSpare());
  if (!spare_.valid()) return false;
  spare_.Reset();
  const int fd = ::accept4(acceptor_.native_handle(), nullptr, nullptr, SOCK_CLOEXEC);
  if (fd >= 0) {
    const linger reset{1, 0};  // close with RST: the client is refused at once
    ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &reset, sizeof(reset));
    ::close(fd);
  }
  spare_.Reset(OpenSpare());
  if (fd < 0) return false;
  return true;
}

}  // namespace vsc::net
