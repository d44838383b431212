// ClusterView: the immutable picture of the cluster that the control thread publishes to the
// data-plane workers (DESIGN §4). Workers hold a shared_ptr<const ClusterView> and never lock;
// a new view replaces the old one by asio::post to each worker.
#pragma once

#include <netinet/in.h>

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sched/backend.h"

namespace vsc::director {

// The lookup virtual services a view describes: indices into ClusterView::services and into the
// per-service counters.
inline constexpr int kUdpService = 0;
inline constexpr int kTcpService = 1;
inline constexpr int kServiceCount = 2;

struct ViewServer {
  std::string id;
  uint32_t slot = 0;        // stable index for per-worker counters (assigned at first registration)
  sockaddr_in address{};    // the server's endpoint for this service (lookup-udp or lookup-tcp)
  sched::Backend backend;   // weight, availability and load as the schedulers see them
};

struct ClusterView {
  uint64_t version = 0;
  std::string scheduler;             // name of the scheduler the workers must run
  uint32_t persistence_timeout_s = 0;
  uint32_t persistence_netmask = 0xffffffff;  // host byte order
  // Per service (kUdpService, kTcpService): the registered servers that declared an endpoint for
  // it, sorted by id. These are the service's only candidates: a server registered without a
  // 'lookup-tcp' endpoint is absent from services[kTcpService], so the TCP proxy never picks it.
  std::array<std::vector<ViewServer>, kServiceCount> services;
};

using ViewPtr = std::shared_ptr<const ClusterView>;

}  // namespace vsc::director
