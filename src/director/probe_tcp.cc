// TCP_CHECK, the probe dispatcher and the deadline the probes share.
#include <fmt/format.h>

#include <asio/use_awaitable.hpp>

#include "director/probe.h"
#include "director/probe_deadline.h"
#include "net/as_tuple.h"

namespace vsc::director {

using net::kTuple;

ProbeDeadline::ProbeDeadline(const asio::any_io_executor& ex, Duration timeout,
                             std::function<void()> action)
    : timer_(ex, timeout), state_(std::make_shared<State>()) {
  state_->action = std::move(action);
  // The handler holds the state, not `this`: it may run after the deadline is destroyed.
  timer_.async_wait([state = state_](const asio::error_code& ec) {
    if (ec || !state->action) return;
    state->expired = true;
    auto action = std::move(state->action);
    state->action = nullptr;
    action();
  });
}

ProbeDeadline::~ProbeDeadline() {
  state_->action = nullptr;
  timer_.cancel();
}

std::string TimeoutText(Duration timeout) {
  return fmt::format("no answer within {:.0f} ms", ToMillis(timeout));
}

asio::awaitable<std::string> ConnectWithin(asio::ip::tcp::socket& socket,
                                           asio::ip::tcp::endpoint endpoint,
                                           const ProbeDeadline& deadline, Duration timeout) {
  auto [ec] = co_await socket.async_connect(endpoint, kTuple);
  if (deadline.expired()) co_return TimeoutText(timeout) + " (connect)";
  if (ec) co_return ec.message();
  co_return std::string();
}

asio::awaitable<membership::ProbeResult> TcpProbe(asio::ip::tcp::endpoint endpoint,
                                                  Duration timeout) {
  auto ex = co_await asio::this_coro::executor;
  asio::ip::tcp::socket socket(ex);
  ProbeDeadline deadline(ex, timeout, [&socket] { socket.close(); });
  std::string error = co_await ConnectWithin(socket, endpoint, deadline, timeout);
  if (!error.empty()) co_return membership::ProbeResult{false, std::move(error), {}};
  co_return membership::ProbeResult{true, "connected", {}};
}

asio::awaitable<membership::ProbeResult> RunProbe(vservice::CheckConfig check,
                                                  asio::ip::tcp::endpoint endpoint,
                                                  std::string host, Duration timeout) {
  switch (check.type) {
    case vservice::CheckType::kTcp:
      co_return co_await TcpProbe(endpoint, timeout);
    case vservice::CheckType::kHttpGet:
      co_return co_await HttpProbe(std::move(check), endpoint, std::move(host), timeout);
    case vservice::CheckType::kUdp:
      co_return co_await UdpProbe(
          std::move(check), asio::ip::udp::endpoint(endpoint.address(), endpoint.port()), timeout);
    case vservice::CheckType::kMisc:
      co_return co_await MiscProbe(std::move(check), timeout);
  }
  co_return membership::ProbeResult{false, "unknown check type", {}};
}

}  // namespace vsc::director
