// Where lookups go: "udp://HOST:PORT" or "tcp://HOST:PORT" (HOST a name, a dotted IPv4 address
// or an IPv6 one in brackets: "udp://[::1]:7000"). Also the shared helpers the lookup clients
// and the load generator use to turn a decoded response into answers or an error.
//
// Pure except the resolvers (getaddrinfo, blocking) and OpenBoundUdpSocket. Thread safe.
#pragma once

#include <netinet/in.h>

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "common/unique_fd.h"
#include "net/endpoint.h"
#include "proto/lookup_codec.h"

namespace vsc::client {

enum class Transport { kUdp, kTcp };

struct LookupTarget {
  Transport transport = Transport::kUdp;
  std::string host;
  uint16_t port = 0;

  std::string ToString() const;  // "udp://127.0.0.1:7000"
};

// Parses "udp://HOST:PORT" or "tcp://HOST:PORT" (HOST a name or dotted IPv4, PORT 1..65535).
Result<LookupTarget> ParseLookupTarget(std::string_view text);

// An IPv6 literal (bare or in brackets) as itself; anything else as net::ParseUdpEndpoint
// resolves a host (a dotted IPv4 address, or a name to its first IPv4 address).
Result<net::SockAddr> ResolveHost(const std::string& host, uint16_t port);

// An unconnected UDP socket bound to an ephemeral port (the port is known before the first send,
// and answers are accepted from any source: in dr mode the real server answers, not the director).
struct BoundUdpSocket {
  UniqueFd fd;
  uint16_t port = 0;
};
// `family`: AF_INET or AF_INET6, the family of the addresses it will send to.
Result<BoundUdpSocket> OpenBoundUdpSocket(int family = AF_INET);

// "127.0.0.1:7000", "[::1]:7000"
std::string FormatAddress(const net::SockAddr& addr);

// Checks a request's id list (1..kMaxLookupIds ids) before anything is sent.
Status CheckLookupIds(std::span<const uint64_t> ids);

// The answers of a response to `asked` ids, or the status it carries as an error:
// bad request -> InvalidArgument, overloaded -> ResourceExhausted, internal -> Internal, and
// DataLoss when the answers do not match the ids asked (count or order).
Result<std::vector<proto::LookupAnswer>> AnswersFromResponse(proto::LookupResponse response,
                                                             std::span<const uint64_t> asked);

}  // namespace vsc::client
