// ProbeDeadline: runs an action once when a probe's timeout passes (close its socket, signal
// its command), unless the probe finished first. Shared by the probes in probe_*.cc; not part
// of the checker's interface. Control thread only.
#pragma once

#include <asio/any_io_executor.hpp>
#include <asio/awaitable.hpp>
#include <asio/ip/tcp.hpp>
#include <asio/steady_timer.hpp>
#include <functional>
#include <memory>
#include <string>

#include "common/clock.h"

namespace vsc::director {

class ProbeDeadline {
 public:
  ProbeDeadline(const asio::any_io_executor& ex, Duration timeout, std::function<void()> action);
  // Cancels the action if it has not run: it may refer to what the probe is about to destroy.
  ~ProbeDeadline();
  ProbeDeadline(const ProbeDeadline&) = delete;
  ProbeDeadline& operator=(const ProbeDeadline&) = delete;

  bool expired() const { return state_->expired; }

 private:
  struct State {
    std::function<void()> action;
    bool expired = false;
  };
  asio::steady_timer timer_;
  std::shared_ptr<State> state_;
};

// Connects `socket` to `endpoint`; `deadline` closes the socket at the probe's timeout.
// Returns "" on success, else what went wrong ("Connection refused", TimeoutText(timeout)).
asio::awaitable<std::string> ConnectWithin(asio::ip::tcp::socket& socket,
                                           asio::ip::tcp::endpoint endpoint,
                                           const ProbeDeadline& deadline, Duration timeout);

}  // namespace vsc::director
