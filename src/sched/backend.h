// Backend and Flow: the scheduler's view of one real server and of one new flow.
//
// A Backend is a plain value copied into each worker's view; the worker owns its copy and
// maintains `active` / `inactive` itself (flows never leave their worker, so no atomics).
// Schedulers read backends through std::span and never keep pointers into them.
#pragma once

#include <cstdint>

namespace vsc::sched {

struct Backend {
  uint64_t key = 0;        // stable identity (e.g. hash of the server's name): Maglev, persistence
  uint32_t weight = 1;     // effective weight; 0 = gets no new work (LVS quiescing)
  bool available = true;   // membership allows new work (ACTIVE); false for BUSY/SILENT/DOWN/DRAINING
  uint32_t active = 0;     // active connections/flows, maintained by the caller
  uint32_t inactive = 0;   // inactive connections/flows, maintained by the caller
  double run_queue = 0;    // load reported in heartbeats (run-queue length, /proc/loadavg)
  double response_ms = 0;  // response-time EWMA reported in heartbeats; 0 = not measured yet
};

struct Flow {
  uint32_t client_ip = 0;  // IPv4, host byte order
  uint16_t client_port = 0;  // not hashed by sh/mh (LVS default; sh-port/mh-port not offered)
};

// The rule every scheduler shares (LVS: weight 0 is quiesced, OVERLOAD/unavailable skipped).
inline bool CanTakeNewWork(const Backend& b) { return b.available && b.weight > 0; }

// LVS ip_vs_dest_conn_overhead(): an active connection costs 256 inactive ones.
inline uint64_t ConnOverhead(const Backend& b) {
  return (static_cast<uint64_t>(b.active) << 8) + b.inactive;
}

}  // namespace vsc::sched
