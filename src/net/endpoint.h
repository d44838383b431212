// Endpoint parsing and printing for configuration strings ("10.0.0.1:9000", "[::1]:9000").
//
// The host part may be a dotted quad, an IPv6 address in brackets (as URLs and ipvsadm write
// it), "localhost", empty or "*" (both mean 0.0.0.0), or a name, which is resolved with
// getaddrinfo (AF_INET: a name is an IPv4 host) and therefore may block: call these at start-up,
// never on a worker's forwarding path. A caller whose socket is IPv4 only (the client library's
// sockaddr_in) checks the family it got.
// Failure returns kInvalidArgument naming the string and what was wrong with it.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include <asio/ip/tcp.hpp>
#include <asio/ip/udp.hpp>
#include <string>
#include <string_view>

#include "common/host_port.h"
#include "common/status.h"

namespace vsc::net {

Result<asio::ip::udp::endpoint> ParseUdpEndpoint(std::string_view host_port);
Result<asio::ip::tcp::endpoint> ParseTcpEndpoint(std::string_view host_port);

// "1.2.3.4:567"; an IPv6 endpoint "[::1]:567".
std::string ToString(const sockaddr_in& addr);
// HOST:PORT for a configured host: an IPv6 address ("::1") in brackets, anything else as is.
using vsc::HostPort;
std::string ToString(const asio::ip::udp::endpoint& ep);
std::string ToString(const asio::ip::tcp::endpoint& ep);

// Conversions between Asio endpoints and the raw sockaddr_in the batch socket hands out.
sockaddr_in ToSockaddr(const asio::ip::udp::endpoint& ep);
asio::ip::udp::endpoint ToUdpEndpoint(const sockaddr_in& addr);

// An IPv4 or IPv6 socket address as recvmmsg/sendmmsg take it, held by value (no allocation):
// the peer of a datagram on a batch socket of either family. `v4.sin_family` says which member
// is valid (AF_INET or AF_INET6; the two share the family's offset).
union SockAddr {
  sockaddr_in v4;
  sockaddr_in6 v6;

  SockAddr() : v6{} {}
  SockAddr(const sockaddr_in& a) : v6{} { v4 = a; }  // NOLINT: an IPv4 address is one
  SockAddr(const sockaddr_in6& a) : v6(a) {}         // NOLINT: so is an IPv6 one
  bool is_v6() const { return v4.sin_family == AF_INET6; }
  uint16_t port() const;  // host order
  // The length the kernel wants for this family.
  socklen_t length() const { return is_v6() ? sizeof(sockaddr_in6) : sizeof(sockaddr_in); }
  const sockaddr* get() const { return reinterpret_cast<const sockaddr*>(this); }
};
SockAddr ToSockAddr(const asio::ip::udp::endpoint& ep);
asio::ip::udp::endpoint ToUdpEndpoint(const SockAddr& addr);
// "1.2.3.4:567" or "[::1]:567".
std::string ToString(const SockAddr& addr);

}  // namespace vsc::net
