// Probes: one active health check of one destination, as an Asio coroutine on the control
// thread (TCP_CHECK, HTTP_GET, UDP_CHECK, MISC_CHECK; vservice/check_config.h). Each probe ends
// within its timeout (MISC_CHECK: SIGTERM to the command's process group at misc_timeout,
// SIGKILL 2 s later) and never blocks the thread; its outcome is a value, never an exception.
// The pure parts (judging an HTTP response, matching a UDP reply) are exposed for tests.
#pragma once

#include <asio/awaitable.hpp>
#include <asio/ip/tcp.hpp>
#include <asio/ip/udp.hpp>
#include <cstddef>
#include <string>
#include <string_view>

#include "common/clock.h"
#include "membership/health.h"
#include "vservice/check_config.h"

namespace vsc::director {

// HTTP_GET reads at most this much of a response (headers and body); more is a failure.
inline constexpr size_t kMaxHttpResponse = 1 << 20;

// A failed probe's outcome: `detail` says why, for the operator.
inline membership::ProbeResult ProbeFailure(std::string detail) {
  return {false, std::move(detail), {}};
}

// Runs the probe `check.type` describes against `endpoint`, bounded by `timeout`
// (vservice::ProbeTimeout). `host` is the HTTP Host header ("10.0.0.1:80").
asio::awaitable<membership::ProbeResult> RunProbe(vservice::CheckConfig check,
                                                  asio::ip::tcp::endpoint endpoint,
                                                  std::string host, Duration timeout);

asio::awaitable<membership::ProbeResult> TcpProbe(asio::ip::tcp::endpoint endpoint,
                                                  Duration timeout);
asio::awaitable<membership::ProbeResult> HttpProbe(vservice::CheckConfig check,
                                                   asio::ip::tcp::endpoint endpoint,
                                                   std::string host, Duration timeout);
asio::awaitable<membership::ProbeResult> UdpProbe(vservice::CheckConfig check,
                                                  asio::ip::udp::endpoint endpoint,
                                                  Duration timeout);
asio::awaitable<membership::ProbeResult> MiscProbe(vservice::CheckConfig check, Duration timeout);

// HTTP_GET's verdict on a whole response, in keepalived's order: no data, then the status
// against [status_min, status_max], then the MD5 of the body against `digest` (if set).
membership::ProbeResult JudgeHttpResponse(std::string_view response,
                                          const vservice::CheckConfig& check);

// The bytes of a hex string ("0a0b"); the caller validated it (vservice::Validate).
std::string HexBytes(std::string_view hex);

// A UDP_CHECK reply passes when it is at least as long as `expect` and its first bytes match
// it, 'X' nibbles matching anything (keepalived's require_reply).
bool ReplyMatches(std::string_view reply, std::string_view expect_hex);

// "no answer within 200 ms": the failure text of a probe that hit its timeout.
std::string TimeoutText(Duration timeout);

}  // namespace vsc::director
