#include "realserver/forwarding.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cstring>

#include "proto/lookup_codec.h"

namespace vsc::realserver {
namespace {

// The client the header names, as a socket address.
net::SockAddr ClientAddr(const proto::ForwardHeader& h) {
  if (h.ipv6) {
    sockaddr_in6 a{};
    a.sin6_family = AF_INET6;
    std::memcpy(&a.sin6_addr, h.client_ip6.data(), h.client_ip6.size());
    a.sin6_port = htons(h.client_port);
    return a;
  }
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(h.client_ip);
  a.sin_port = htons(h.client_port);
  return a;
}

}  // namespace

Inbound ResolveForwarding(std::span<const uint8_t> datagram, const net::SockAddr& peer,
                          const std::vector<asio::ip::address>& trusted) {
  Inbound in;
  in.payload = datagram;
  in.reply_to = peer;
  if (!proto::HasForwardHeader(datagram)) return in;
  const proto::ForwardCheck check = proto::CheckForwardHeader(datagram);
  if (check.fault != proto::ForwardFault::kNone) {
    in.verdict = Inbound::Verdict::kMalformed;
    return in;
  }
  const asio::ip::address from = net::ToUdpEndpoint(peer).address();
  if (std::find(trusted.begin(), trusted.end(), from) == trusted.end()) {
    in.verdict = Inbound::Verdict::kUntrusted;
    return in;
  }
  in.verdict = Inbound::Verdict::kForwarded;
  in.reply_to = ClientAddr(check.header);
  in.payload = datagram.subspan(check.header.size());
  return in;
}

}  // namespace vsc::realserver
