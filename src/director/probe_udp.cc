// UDP_CHECK: send the payload on a connected socket, so an ICMP port unreachable comes back as
// ECONNREFUSED on the receive; then wait for a reply (require_reply) or for no error.
#include <fmt/format.h>

#include <array>
#include <asio/use_awaitable.hpp>
#include <cctype>

#include "director/probe.h"
#include "director/probe_deadline.h"
#include "net/as_tuple.h"

namespace vsc::director {

using net::kTuple;
namespace {

int Nibble(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  return std::tolower(static_cast<unsigned char>(c)) - 'a' + 10;
}

bool IsAny(char c) { return c == 'X' || c == 'x'; }

}  // namespace

std::string HexBytes(std::string_view hex) {
  std::string bytes;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    bytes.push_back(static_cast<char>(Nibble(hex[i]) << 4 | Nibble(hex[i + 1])));
  }
  return bytes;
}

bool ReplyMatches(std::string_view reply, std::string_view expect_hex) {
  if (reply.size() * 2 < expect_hex.size()) return false;
  for (size_t i = 0; i < expect_hex.size(); ++i) {
    if (IsAny(expect_hex[i])) continue;
    const auto byte = static_cast<unsigned char>(reply[i / 2]);
    const int nibble = i % 2 == 0 ? byte >> 4 : byte & 0xf;
    if (nibble != Nibble(expect_hex[i])) return false;
  }
  return true;
}

asio::awaitable<membership::ProbeResult> UdpProbe(vservice::CheckConfig check,
                                                  asio::ip::udp::endpoint endpoint,
                                                  Duration timeout) {
  auto ex = co_await asio::this_coro::executor;
  asio::ip::udp::socket socket(ex);
  asio::error_code ec;
  socket.open(endpoint.protocol(), ec);
  if (!ec) socket.connect(endpoint, ec);
  if (ec) {
    co_return ProbeFailure("opening a UDP socket: " + ec.message());
  }
  ProbeDeadline deadline(ex, timeout, [&socket] { socket.cancel(); });
  const std::string payload = HexBytes(check.payload);
  auto [send_ec, sent] = co_await socket.async_send(asio::buffer(payload), kTuple);
  if (send_ec) co_return ProbeFailure("sending the payload: " + send_ec.message());
  std::array<char, 65536> buf;
  auto [recv_ec, n] = co_await socket.async_receive(asio::buffer(buf), kTuple);
  if (deadline.expired()) {
    if (check.expect.empty()) {
      co_return membership::ProbeResult{true, "no ICMP error within the timeout", {}};
    }
    co_return ProbeFailure(TimeoutText(timeout) + " (no reply)");
  }
  if (recv_ec == asio::error::connection_refused) co_return ProbeFailure("port unreachable (ICMP)");
  if (recv_ec) co_return ProbeFailure(recv_ec.message());
  const std::string_view reply(buf.data(), n);
  if (!check.expect.empty() && !ReplyMatches(reply, check.expect)) {
    co_return ProbeFailure(
        fmt::format("reply of {} bytes does not match require_reply {}", n, check.expect));
  }
  co_return membership::ProbeResult{true, fmt::format("reply of {} bytes", n), {}};
}

}  // namespace vsc::director
