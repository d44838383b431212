#include "net/endpoint.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <sys/socket.h>

#include <charconv>
#include <cstring>

namespace vsc::net {
namespace {

Result<asio::ip::address> ParseHost(std::string_view host, std::string_view whole) {
  if (host.empty() || host == "*") return asio::ip::address(asio::ip::address_v4::any());
  if (host == "localhost") return asio::ip::address(asio::ip::address_v4::loopback());
  std::string h(host);
  if (h.size() >= 2 && h.front() == '[' && h.back() == ']') {
    asio::error_code ec;
    const auto v6 = asio::ip::make_address_v6(h.substr(1, h.size() - 2), ec);
    if (ec) {
      return InvalidArgument("endpoint \"" + std::string(whole) + "\": \"" + h +
                             "\" is not an IPv6 address");
    }
    return asio::ip::address(v6);
  }
  in_addr a{};
  if (::inet_pton(AF_INET, h.c_str(), &a) == 1) {
    return asio::ip::address(asio::ip::address_v4(ntohl(a.s_addr)));
  }
  addrinfo hints{};
  hints.ai_family = AF_INET;
  addrinfo* res = nullptr;
  int rc = ::getaddrinfo(h.c_str(), nullptr, &hints, &res);
  if (rc != 0 || res == nullptr) {
    return InvalidArgument("endpoint \"" + std::string(whole) + "\": cannot resolve host \"" + h +
                           "\" to an IPv4 address (" + ::gai_strerror(rc) +
                           "); use a numeric address (an IPv6 one in brackets: [::1]:port)");
  }
  auto* sin = reinterpret_cast<sockaddr_in*>(res->ai_addr);
  asio::ip::address_v4 out(ntohl(sin->sin_addr.s_addr));
  ::freeaddrinfo(res);
  return asio::ip::address(out);
}

struct ParsedHostPort {
  asio::ip::address address;
  uint16_t port;
};

Result<ParsedHostPort> Parse(std::string_view s) {
  size_t colon = s.rfind(':');
  if (colon == std::string_view::npos) {
    return InvalidArgument("endpoint \"" + std::string(s) +
                           "\": missing port; write host:port, e.g. 127.0.0.1:9000 or [::1]:9000");
  }
  std::string_view host = s.substr(0, colon);
  std::string_view port_str = s.substr(colon + 1);
  const bool bracketed = host.starts_with('[') && host.ends_with(']');
  if (!bracketed && host.find_first_of(":[]") != std::string_view::npos) {
    return InvalidArgument("endpoint \"" + std::string(s) +
                           "\": an IPv6 address goes in brackets, e.g. [::1]:9000");
  }
  unsigned port = 0;
  auto [ptr, ec] = std::from_chars(port_str.data(), port_str.data() + port_str.size(), port);
  if (port_str.empty() || ec != std::errc() || ptr != port_str.data() + port_str.size() ||
      port > 65535) {
    return InvalidArgument("endpoint \"" + std::string(s) + "\": port \"" + std::string(port_str) +
                           "\" is not a number in 0..65535");
  }
  VSC_ASSIGN_OR_RETURN(auto addr, ParseHost(host, s));
  return ParsedHostPort{addr, static_cast<uint16_t>(port)};
}

}  // namespace

Result<asio::ip::udp::endpoint> ParseUdpEndpoint(std::string_view host_port) {
  VSC_ASSIGN_OR_RETURN(ParsedHostPort hp, Parse(host_port));
  return asio::ip::udp::endpoint(hp.address, hp.port);
}

Result<asio::ip::tcp::endpoint> ParseTcpEndpoint(std::string_view host_port) {
  VSC_ASSIGN_OR_RETURN(ParsedHostPort hp, Parse(host_port));
  return asio::ip::tcp::endpoint(hp.address, hp.port);
}

std::string ToString(const sockaddr_in& addr) {
  char buf[INET_ADDRSTRLEN] = {};
  ::inet_ntop(AF_INET, &addr.sin_addr, buf, sizeof(buf));
  return std::string(buf) + ":" + std::to_string(ntohs(addr.sin_port));
}

// "1.2.3.4:5" or "[::1]:5", as ipvsadm and URLs write an IPv6 address with a port.
std::string ToString(const asio::ip::udp::endpoint& ep) {
  return HostPort(ep.address().to_string(), ep.port());
}

std::string ToString(const asio::ip::tcp::endpoint& ep) {
  return HostPort(ep.address().to_string(), ep.port());
}

sockaddr_in ToSockaddr(const asio::ip::udp::endpoint& ep) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(ep.port());
  a.sin_addr.s_addr = htonl(ep.address().to_v4().to_uint());
  return a;
}

asio::ip::udp::endpoint ToUdpEndpoint(const sockaddr_in& addr) {
  return asio::ip::udp::endpoint(asio::ip::address_v4(ntohl(addr.sin_addr.s_addr)),
                                 ntohs(addr.sin_port));
}

uint16_t SockAddr::port() const { return ntohs(is_v6() ? v6.sin6_port : v4.sin_port); }

SockAddr ToSockAddr(const asio::ip::udp::endpoint& ep) {
  if (ep.address().is_v4()) return ToSockaddr(ep);
  sockaddr_in6 a{};
  a.sin6_family = AF_INET6;
  a.sin6_port = htons(ep.port());
  const auto bytes = ep.address().to_v6().to_bytes();
  std::memcpy(&a.sin6_addr, bytes.data(), bytes.size());
  a.sin6_scope_id = static_cast<uint32_t>(ep.address().to_v6().scope_id());
  return a;
}

asio::ip::udp::endpoint ToUdpEndpoint(const SockAddr& addr) {
  if (!addr.is_v6()) return ToUdpEndpoint(addr.v4);
  asio::ip::address_v6::bytes_type bytes;
  std::memcpy(bytes.data(), &addr.v6.sin6_addr, bytes.size());
  return {asio::ip::address_v6(bytes, addr.v6.sin6_scope_id), ntohs(addr.v6.sin6_port)};
}

std::string ToString(const SockAddr& addr) {
  if (!addr.is_v6()) return ToString(addr.v4);
  char buf[INET6_ADDRSTRLEN] = {};
  ::inet_ntop(AF_INET6, &addr.v6.sin6_addr, buf, sizeof(buf));
  return "[" + std::string(buf) + "]:" + std::to_string(addr.port());
}

}  // namespace vsc::net
