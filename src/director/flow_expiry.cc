#include "director/flow_expiry.h"

#include <set>

namespace vsc::director {

std::vector<FlowsToEndEntry> FlowsToEnd(const ServiceView* previous, const ServiceView& next,
                                        bool expire_nodest_conn) {
  std::vector<FlowsToEndEntry> out;
  if (previous != nullptr && expire_nodest_conn) {
    std::set<vservice::AddrPort> kept;
    for (const DestView& d : next.dests) kept.insert(d.dest);
    for (const DestView& d : previous->dests) {
      if (!kept.contains(d.dest)) out.push_back({d.dest, EndReason::kRemoved});
    }
    const auto& sorry = previous->config.sorry_server;
    if (sorry && next.config.sorry_server != sorry) {
      out.push_back({*sorry, EndReason::kRemoved, /*sorry=*/true});
    }
  }
  for (const DestView& d : next.dests) {
    if (d.shutdown_sessions && d.check_down) out.push_back({d.dest, EndReason::kMarkedDown});
  }
  return out;
}

const char* EndReasonText(const FlowsToEndEntry& entry) {
  switch (entry.reason) {
    case EndReason::kRemoved:
      return entry.sorry ? "sorry server removed (expire_nodest_conn)"
                         : "destination removed (expire_nodest_conn)";
    case EndReason::kMarkedDown:
      return "destination marked down by its check (on_marked_down = shutdown-sessions)";
  }
  return "?";
}

}  // namespace vsc::director
