#include "net/port_pair.h"

#include <vector>

namespace vsc::net {

Result<TcpUdpPair> BindTcpUdpPair(asio::io_context& io, const asio::ip::address& address,
                                  uint16_t port, const UdpBatchOptions& udp_options) {
  constexpr int kAttempts = 16;
  Status last;
  // A listener whose number was taken for UDP is held until the end, so that the kernel cannot
  // hand the same number out again on the next attempt (bind(0) may prefer one number
  // deterministically, e.g. in a narrow ip_local_port_range).
  std::vector<std::unique_ptr<TcpListener>> clashed;
  for (int attempt = 0; attempt < (port == 0 ? kAttempts : 1); ++attempt) {
    auto tcp = TcpListener::Listen(io, {address, port}, udp_options.reuse_port);
    if (!tcp.ok()) {
      last = tcp.status();
      continue;
    }
    const uint16_t chosen = (*tcp)->local_port();
    auto udp = UdpBatchSocket::Bind(io, {address, chosen}, udp_options);
    if (!udp.ok()) {
      last = udp.status();
      clashed.push_back(std::move(tcp).value());  // with port 0 another number is tried
      continue;
    }
    return TcpUdpPair{std::move(tcp).value(), std::move(udp).value(), chosen};
  }
  return last;
}

}  // namespace vsc::net
