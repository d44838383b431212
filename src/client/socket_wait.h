// Blocking-client helpers over non-blocking sockets: wait for readiness until a deadline, and
// connect within one. Every wait goes through ppoll with the caller's deadline on `clock`.
#pragma once

#include "common/clock.h"
#include "common/status.h"
#include "common/unique_fd.h"
#include "net/endpoint.h"

namespace vsc::client {

// Waits for `events` on fd until deadline. Unavailable("timed out") on timeout.
Status WaitFor(int fd, short events, TimePoint deadline, const Clock& clock);

// A connected non-blocking TCP socket (IPv4 or IPv6, as `target` is) with TCP_NODELAY;
// Unavailable "WHAT ADDRESS: reason" when the connect fails or does not finish by the deadline
// ("connect 127.0.0.1:7003: Connection refused", "... : timed out").
Result<UniqueFd> ConnectTcp(const net::SockAddr& target, TimePoint deadline, const Clock& clock,
                            std::string_view what = "connect");

}  // namespace vsc::client
