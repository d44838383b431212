// SyncRecord: one piece of state a director passes to its peers (issue 11; LVS's connection
// sync daemon): a persistence template or a UDP nat session, with the time it has left. The
// director that records it notes it in a SyncOutbox (sync_outbox.h); StateSync (state_sync.h)
// sends it; the peer adopts it into the same service (ServiceEngine::AdoptSynced).
#pragma once

#include <chrono>
#include <cstdint>

#include "common/clock.h"
#include "vservice/ip_address.h"
#include "vservice/service_key.h"

namespace vsc::director {

enum class SyncKind : uint8_t {
  kTemplate = 1,    // client network -> destination (persistence, ipvsadm -p)
  kUdpSession = 2,  // client address:port -> destination (a UDP nat session)
};

struct SyncRecord {
  SyncKind kind = SyncKind::kTemplate;
  vservice::ServiceKey service;
  // A template: the client's network (its address masked to the service's persistence prefix,
  // IPv4 or IPv6) and port 0. A session: the client's address and port.
  vservice::AddrPort client;
  vservice::AddrPort dest;
  std::chrono::milliseconds expires_in{0};
  friend bool operator==(const SyncRecord&, const SyncRecord&) = default;
};

}  // namespace vsc::director
