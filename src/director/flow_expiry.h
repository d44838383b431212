// FlowsToEnd: which destinations' open flows a worker ends when a new view of its service
// arrives (issue 12, LVS semantics at changes; shared/reference/virtual_services.md §3.3-3.4):
//
// - a destination that the new view no longer has (ipvsadm -d, a table edit, -C): its flows
//   end when `expire_nodest_conn` is set (LVS sysctl of that name: "expire the connection
//   immediately ... the client program will be notified that the connection is closed");
//   otherwise they go on to the old address until they end on their own;
// - the sorry server, when an edit removes or replaces it and `expire_nodest_conn` is set (in
//   keepalived the sorry server is a destination of its own, so the same rule reaches it);
// - a destination its health check marks down, configured with HAProxy's
//   `on-marked-down shutdown-sessions`: its flows end ("all connections to the server are
//   immediately terminated when the server goes down");
// - weight 0 (quiescent), a drain, a failed connect (passive mark) or a membership state end
//   nothing: existing flows go on, only new ones go elsewhere.
//
// Pure: no I/O. `previous` may be null (the first view: nothing to end).
#pragma once

#include <vector>

#include "director/service_view.h"

namespace vsc::director {

enum class EndReason { kRemoved, kMarkedDown };

struct FlowsToEndEntry {
  vservice::AddrPort dest;
  EndReason reason;
  bool sorry = false;  // the flows to the (old) sorry server, not to a destination
};

std::vector<FlowsToEndEntry> FlowsToEnd(const ServiceView* previous, const ServiceView& next,
                                        bool expire_nodest_conn);

// "removed (expire_nodest_conn)" / "marked down (shutdown-sessions)", for logs and ProxyHandle.
const char* EndReasonText(const FlowsToEndEntry& entry);

}  // namespace vsc::director
