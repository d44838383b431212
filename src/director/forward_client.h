// The client a datagram came from, as the director names it to a real server (DESIGN §3 `dr`,
// docs/protocol.md forward header): the table's address (for persistence and the schedulers)
// and the forward header, in its IPv4 form (version 1) or its IPv6 form (version 2). An
// IPv4-mapped peer, as a dual-stack socket reports an IPv4 client, is the IPv4 client it maps.
// Pure; shared by the UDP `dr` services and the SQL read port.
#pragma once

#include <asio/ip/udp.hpp>
#include <optional>

#include "net/endpoint.h"
#include "proto/lookup_codec.h"
#include "vservice/ip_address.h"

namespace vsc::director {

struct ForwardClient {
  vservice::AddrPort addr;
  proto::ForwardHeader header;
};

ForwardClient ForwardClientOf(const net::SockAddr& peer);

// Where a socket of `family` sends to reach `to`: `to` itself, or for an IPv4 address from an
// IPv6 socket its IPv4-mapped form (a dual-stack socket reaches IPv4 that way); nullopt when
// an IPv4 socket is asked to reach an IPv6 address.
std::optional<asio::ip::udp::endpoint> SendTarget(const asio::ip::udp& family,
                                                  const net::SockAddr& to);

}  // namespace vsc::director
