#include "director/forward_client.h"

#include "director/tcp_nat_service.h"

namespace vsc::director {

ForwardClient ForwardClientOf(const net::SockAddr& peer) {
  asio::ip::address a = net::ToUdpEndpoint(peer).address();
  if (a.is_v6() && a.to_v6().is_v4_mapped()) {
    a = asio::ip::make_address_v4(asio::ip::v4_mapped, a.to_v6());
  }
  const vservice::IpAddress ip = FromAsio(a);
  if (ip.is_v4()) return {{ip, peer.port()}, {ip.v4(), peer.port(), 0}};
  return {{ip, peer.port()}, proto::ForwardHeader::V6(ip.bytes(), peer.port())};
}

std::optional<asio::ip::udp::endpoint> SendTarget(const asio::ip::udp& family,
                                                  const net::SockAddr& to) {
  asio::ip::udp::endpoint ep = net::ToUdpEndpoint(to);
  if (family == asio::ip::udp::v4()) {
    if (ep.address().is_v6()) return std::nullopt;
    return ep;
  }
  if (ep.address().is_v4()) {
    ep.address(asio::ip::make_address_v6(asio::ip::v4_mapped, ep.address().to_v4()));
  }
  return ep;
}

}  // namespace vsc::director
