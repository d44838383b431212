// The values that cross the Membership boundary: what a real server registers and heartbeats,
// what the director keeps about it, and the transitions it reports. Plain copyable structs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/clock.h"
#include "membership/state.h"

namespace vsc::membership {

// One service a real server offers, e.g. {"lookup-udp", "127.0.0.1", 7001}; a fronted local
// service has its protocol ("tcp", "udp") in `proto`, e.g. {"web", "127.0.0.1", 8080, "tcp"}.
struct Endpoint {
  std::string service;
  std::string host;
  uint16_t port = 0;
  std::string proto;  // empty for vsc's own endpoints
  bool operator==(const Endpoint&) const = default;
};

// Sent once per control session. `incarnation` grows with every start of the server process, so
// the director can tell a restarted server from a delayed packet of the old one.
struct Registration {
  std::string id;
  uint64_t incarnation = 0;
  uint32_t weight = 1;  // 0 is allowed: registered but given no new work by weighted schedulers
  std::vector<Endpoint> endpoints;
  std::vector<std::string> capabilities;
  uint64_t applied_seq = 0;
  bool needs_catch_up = false;  // enter CATCHING_UP after the first heartbeat, until CatchUpDone
  bool operator==(const Registration&) const = default;
};

// What a heartbeat says about the server's load (DESIGN.md §5).
struct Load {
  double run_queue = 0;  // /proc/loadavg run-queue length
  double cpu_pct = 0;
  uint32_t in_flight = 0;  // requests being served
  double queue_fill = 0;   // 0..1
  double response_ms = 0;  // response-time EWMA
  bool operator==(const Load&) const = default;
};

struct Heartbeat {
  std::string id;
  uint64_t incarnation = 0;
  uint64_t counter = 0;  // strictly increasing within an incarnation; older ones are stale
  Load load;
  bool flag_down = false;  // the server is shutting down: DOWN at once
  bool flag_full = false;  // the server is saturated: BUSY until a heartbeat without it
  uint64_t applied_seq = 0;
  std::string digest;
};

// One state change of one server, with a reason a person can read in a log.
struct Transition {
  std::string id;
  State from;
  State to;
  std::string reason;  // "2 heartbeats missed (last 412 ms ago)", "control session closed", ...
  TimePoint at;
};

// What the director knows about one server.
struct ServerRecord {
  Registration reg;  // the latest accepted registration
  State state = State::kJoining;
  uint32_t weight = 1;  // effective: operator override, else reg.weight; 0 while DRAINING
  Load load;
  TimePoint last_heartbeat;  // of this incarnation; the registration time until the first one
  uint64_t heartbeats = 0;   // accepted heartbeats, all incarnations
  uint64_t applied_seq = 0;
  std::string digest;
};

}  // namespace vsc::membership
