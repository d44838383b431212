// Forwarding: how a real server reads a datagram that may carry the director's forward header
// (docs/protocol.md, dr mode; the IPv4 form and the IPv6 one), shared by the lookup and SQL
// services. Only a trusted forwarder (by default the director's address) may name another
// address to answer; anyone else could use this server to reflect traffic at a victim. Pure, and
// allocation-free: a malformed header is refused by CheckForwardHeader without a message.
#pragma once

#include <asio/ip/address.hpp>
#include <cstdint>
#include <span>
#include <vector>

#include "net/endpoint.h"

namespace vsc::realserver {

struct Inbound {
  enum class Verdict { kDirect, kForwarded, kMalformed, kUntrusted };
  Verdict verdict = Verdict::kDirect;
  std::span<const uint8_t> payload;  // the client's message, forward header removed
  // Where the answer goes: the sender, or the client the header names, in the header's family
  // (an IPv6 client is answered from a socket of the IPv6 family: a real server that listens
  // on an IPv6 address).
  net::SockAddr reply_to;
};

// `peer` is the datagram's sender; `trusted` the forwarders' addresses (IPv4 or IPv6).
Inbound ResolveForwarding(std::span<const uint8_t> datagram, const net::SockAddr& peer,
                          const std::vector<asio::ip::address>& trusted);

}  // namespace vsc::realserver
