// Forwarding: how a real server reads a datagram that may carry the director's forward header
// (docs/protocol.md, dr mode), shared by the lookup and SQL services. Only a trusted forwarder
// (by default the director's address) may name another address to answer; anyone else could use
// this server to reflect traffic at a victim. Pure.
#pragma once

#include <netinet/in.h>

#include <cstdint>
#include <span>
#include <vector>

namespace vsc::realserver {

struct Inbound {
  enum class Verdict { kDirect, kForwarded, kMalformed, kUntrusted };
  Verdict verdict = Verdict::kDirect;
  std::span<const uint8_t> payload;  // the client's message, forward header removed
  sockaddr_in reply_to{};            // where the answer goes
};

// `trusted` holds IPv4 addresses in host order.
Inbound ResolveForwarding(std::span<const uint8_t> datagram, const sockaddr_in& peer,
                          const std::vector<uint32_t>& trusted);

}  // namespace vsc::realserver
