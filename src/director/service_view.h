// ServiceView: the immutable picture of one virtual service that the control thread publishes
// to every worker serving it (DESIGN §3-§4): its configuration and its destinations, each with
// the figures the schedulers read and the counters the workers bump.
//
// DestStats and ServiceStats are shared by every worker and every view of the same
// (service, destination): one relaxed atomic per figure, so `lc`/`wlc` compare the same
// cluster-wide connection counts on every worker (issue 12) and the totals survive a new view.
// Workers never lock; the control thread reads the atomics for Runtime().
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sched/backend.h"
#include "vservice/ip_address.h"
#include "vservice/service_key.h"
#include "vservice/virtual_service_table.h"

namespace vsc::sched {
class SchedTable;
}

namespace vsc::director {

class SessionHints;
class SharedPersistence;
class SyncOutbox;

struct DestStats {
  std::atomic<uint64_t> active{0};    // connections open now (TCP) / sessions (UDP nat)
  std::atomic<uint64_t> inactive{0};  // connecting, or closing
  std::atomic<uint64_t> conns{0};     // scheduled since start or the last zero
  std::atomic<uint64_t> packets_in{0};
  std::atomic<uint64_t> packets_out{0};
  std::atomic<uint64_t> bytes_in{0};          // client -> destination
  std::atomic<uint64_t> bytes_out{0};         // destination -> client
  std::atomic<uint64_t> connect_failures{0};  // passive check: TCP connects that failed
  std::atomic<uint64_t> unreachable{0};  // passive check: UDP datagrams answered port unreachable
};

struct ServiceStats {
  std::atomic<uint64_t> conns{0};
  std::atomic<uint64_t> packets_in{0};
  std::atomic<uint64_t> packets_out{0};
  std::atomic<uint64_t> bytes_in{0};
  std::atomic<uint64_t> bytes_out{0};
  std::atomic<uint64_t> no_dest{0};  // refused: no usable destination and no sorry server
  // refused: the director was out of descriptors (accept or connect failed with EMFILE/ENFILE)
  std::atomic<uint64_t> no_descriptor{0};
  std::atomic<uint64_t> to_sorry{0};      // sent to the sorry server
  std::atomic<uint64_t> redispatched{0};  // a connect failed and another destination took it
  // nat: open connections / UDP sessions closed by the director at a change (flow_expiry.h)
  std::atomic<uint64_t> flows_ended{0};
  // The lookup service over UDP (dr): datagrams dropped before scheduling.
  std::atomic<uint64_t> malformed{0};  // not a lookup request (also: truncated by the kernel)
  std::atomic<uint64_t> too_large{0};  // no room for the forward header
};

inline void Bump(std::atomic<uint64_t>& a, uint64_t n = 1) {
  a.fetch_add(n, std::memory_order_relaxed);
}
inline void Drop(std::atomic<uint64_t>& a) { a.fetch_sub(1, std::memory_order_relaxed); }
inline uint64_t Read(const std::atomic<uint64_t>& a) { return a.load(std::memory_order_relaxed); }

struct DestView {
  vservice::AddrPort dest;
  vservice::Method method = vservice::Method::kNat;
  std::string server_id;           // agent id, empty for a static destination
  sched::Backend backend;          // weight / availability / load; active counts come from stats
  uint32_t u_threshold = 0;        // ipvsadm -x; 0 = none
  std::string state;               // "UP", "DOWN", "QUIESCENT", or the agent's membership state
  bool check_down = false;         // its health check says DOWN
  bool shutdown_sessions = false;  // on_marked_down = shutdown-sessions (flow_expiry.h)
  std::shared_ptr<DestStats> stats;
};

struct ServiceView {
  uint64_t version = 0;
  vservice::ServiceKey key;
  vservice::ServiceConfig config;
  std::vector<DestView> dests;  // in the table's destination order
  std::shared_ptr<ServiceStats> stats;
  std::shared_ptr<DestStats> sorry_stats;  // counters of the sorry server, when there is one
  // The scheduler's table for these destinations, built once on the control thread and read by
  // every worker (sched_table_share.h); nullptr for schedulers that use none.
  std::shared_ptr<const sched::SchedTable> sched_table;
  // The service's persistence templates, one table for every worker and every view while the
  // persistence settings stay (shared_persistence.h); nullptr without persistence.
  std::shared_ptr<SharedPersistence> persistence;
  // State sync (issue 11): where workers note templates and UDP sessions for the peer
  // directors, and the UDP sessions the peers hold (session_hints.h); nullptr without peers.
  std::shared_ptr<SyncOutbox> sync;
  std::shared_ptr<SessionHints> session_hints;
};

using ServiceViewPtr = std::shared_ptr<const ServiceView>;

}  // namespace vsc::director
