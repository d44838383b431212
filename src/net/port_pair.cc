#include "net/port_pair.h"

namespace vsc::net {

Result<TcpUdpPair> BindTcpUdpPair(asio::io_context& io, const asio::ip::address_v4& address,
                                  uint16_t port, const UdpBatchOptions& udp_options) {
  constexpr int kAttempts = 16;
  Status last;
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
      continue;  // the listener is released here; with port 0 another number is tried
    }
    return TcpUdpPair{std::move(tcp).value(), std::move(udp).value(), chosen};
  }
  return last;
}

}  // namespace vsc::net
