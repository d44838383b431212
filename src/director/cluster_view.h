// ClusterView: the immutable picture of the registered real servers that the control plane
// builds (DESIGN §4); the ServiceEngine turns it into the built-in lookup entries' ServiceViews
// (BuildLookupView), which the workers schedule from.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sched/backend.h"
#include "vservice/ip_address.h"

namespace vsc::director {

// The lookup virtual services a view describes: indices into ClusterView::services and into the
// per-service counters.
inline constexpr int kUdpService = 0;
inline constexpr int kTcpService = 1;
inline constexpr int kServiceCount = 2;

struct ViewServer {
  std::string id;
  vservice::AddrPort address;  // its endpoint for this service (lookup-udp or lookup-tcp)
  sched::Backend backend;      // weight, availability and load as the schedulers see them
};

struct ClusterView {
  uint64_t version = 0;
  // Per service (kUdpService, kTcpService): the registered servers that declared an endpoint for
  // it, sorted by id. These are the service's only candidates: a server registered without a
  // 'lookup-tcp' endpoint is absent from services[kTcpService], so the TCP proxy never picks it.
  std::array<std::vector<ViewServer>, kServiceCount> services;
};

using ViewPtr = std::shared_ptr<const ClusterView>;

}  // namespace vsc::director
