// BuildLookupView: the ServiceView of one of the built-in lookup entries (`-u VIP:lookup_port`
// dr, `-t VIP:lookup_port` nat). Its destinations are not in the table: they are the registered
// agents that declared the service's endpoint ('lookup-udp' / 'lookup-tcp'), as the
// ControlPlane lists them in ClusterView::services, with the ControlPlane's verdict on each
// (weight, availability, load). The table gives the service's configuration (scheduler,
// persistence, one-packet, sorry server), which the operator edits like any entry's.
//
// Pure: no I/O, no clock; the stats pointers are passed through untouched.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "director/cluster_view.h"
#include "director/service_view.h"
#include "vservice/virtual_service_table.h"

namespace vsc::director {

// The ClusterView index (kUdpService, kTcpService) of a built-in entry's protocol.
int LookupServiceIndex(vservice::Proto proto);

struct LookupDestInputs {
  std::string state;  // the agent's membership state, for listings
  std::shared_ptr<DestStats> stats;
};

// `inputs` is aligned with `candidates` (the cluster view's list for the entry's protocol).
std::shared_ptr<ServiceView> BuildLookupView(const vservice::VirtualService& service,
                                             const std::vector<ViewServer>& candidates,
                                             const std::vector<LookupDestInputs>& inputs,
                                             uint64_t version);

}  // namespace vsc::director
