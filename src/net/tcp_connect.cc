// Connect with a deadline (tcp_proxy.h).
#include <asio/steady_timer.hpp>
#include <asio/use_awaitable.hpp>
#include <cerrno>
#include <memory>
#include <string>

#include "net/as_tuple.h"
#include "net/endpoint.h"
#include "net/tcp_proxy.h"

namespace vsc::net {

namespace {

using asio::ip::tcp;

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
