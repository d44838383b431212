// Endpoint parsing and printing for configuration strings ("10.0.0.1:9000").
//
// IPv4 only: every address in vscluster is an IPv4 sockaddr_in (the data path keys flows on it,
// and the lab networks are IPv4). The host part may be a dotted quad, "localhost", empty or "*"
// (both mean 0.0.0.0), or a name, which is resolved with getaddrinfo (AF_INET) and therefore
// may block: call these at start-up, never on a worker's forwarding path.
// Failure returns kInvalidArgument naming the string and what was wrong with it.
#pragma once

#include <netinet/in.h>

#include <asio/ip/tcp.hpp>
#include <asio/ip/udp.hpp>
#include <string>
#include <string_view>

#include "common/status.h"

namespace vsc::net {

Result<asio::ip::udp::endpoint> ParseUdpEndpoint(std::string_view host_port);
Result<asio::ip::tcp::endpoint> ParseTcpEndpoint(std::string_view host_port);

// "1.2.3.4:567".
std::string ToString(const sockaddr_in& addr);
std::string ToString(const asio::ip::udp::endpoint& ep);
std::string ToString(const asio::ip::tcp::endpoint& ep);

// Conversions between Asio endpoints and the raw sockaddr_in the batch socket hands out.
sockaddr_in ToSockaddr(const asio::ip::udp::endpoint& ep);
asio::ip::udp::endpoint ToUdpEndpoint(const sockaddr_in& addr);

}  // namespace vsc::net
