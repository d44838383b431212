#include "realserver/forwarding.h"

#include <arpa/inet.h>

#include <algorithm>

#include "proto/lookup_codec.h"

namespace vsc::realserver {

Inbound ResolveForwarding(std::span<const uint8_t> datagram, const sockaddr_in& peer,
                          const std::vector<uint32_t>& trusted) {
  Inbound in;
  in.payload = datagram;
  in.reply_to = peer;
  if (!proto::HasForwardHeader(datagram)) return in;
  auto header = proto::DecodeForwardHeader(datagram);
  if (!header.ok()) {
    in.verdict = Inbound::Verdict::kMalformed;
    return in;
  }
  if (std::find(trusted.begin(), trusted.end(), ntohl(peer.sin_addr.s_addr)) == trusted.end()) {
    in.verdict = Inbound::Verdict::kUntrusted;
    return in;
  }
  in.verdict = Inbound::Verdict::kForwarded;
  in.reply_to.sin_addr.s_addr = htonl(header->client_ip);
  in.reply_to.sin_port = htons(header->client_port);
  in.payload = datagram.subspan(proto::kForwardHeaderSize);
  return in;
}

}  // namespace vsc::realserver
