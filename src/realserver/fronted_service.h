// A local service that `vsc realserver` fronts without implementing it (`--service
// NAME=tcp:HOST:PORT`, DESIGN.md §3): an nginx, a redis, a dnsmasq. The agent registers it
// with the director as an endpoint with a protocol; a destination of the director's table at
// HOST:PORT then follows this server's membership (drain, weight, DOWN) and carries its
// heartbeat load, so `ll` (seed 004's run-queue length) and `dwlc` schedule it.
//
// Pure: parsing and the registration value; no sockets.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "proto/control.pb.h"

namespace vsc::realserver {

struct FrontedService {
  std::string name;   // the operator's name, e.g. "web"
  std::string proto;  // "tcp" or "udp"
  std::string host;   // the address the director connects to: a numeric IPv4 or IPv6 address
  uint16_t port = 0;
  bool operator==(const FrontedService&) const = default;
};

// "NAME=tcp:HOST:PORT" or "NAME=udp:HOST:PORT"; an IPv6 HOST in brackets ("[::1]:80"). NAME is
// 1-32 of [A-Za-z0-9_.-] and not one of vsc's own endpoint names; HOST is a numeric address
// other than 0.0.0.0 or :: (the director connects to it); PORT is 1-65535.
Result<FrontedService> ParseFrontedService(std::string_view spec);

// Every spec parsed; a name given twice is an error.
Result<std::vector<FrontedService>> ParseFrontedServices(const std::vector<std::string>& specs);

// The endpoint the agent registers for it.
proto::Endpoint ToEndpoint(const FrontedService& service);

// vsc's own endpoint names ("lookup-udp", "lookup-tcp", "http", "sql-udp", "sql-tcp",
// "relay"), which a fronted service may not take.
bool IsBuiltinEndpointName(std::string_view name);

}  // namespace vsc::realserver
