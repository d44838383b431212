// ClusterView: the immutable picture of the cluster that the control thread publishes to the
// data-plane workers (DESIGN §4). Workers hold a shared_ptr<const ClusterView> and never lock;
// a new view replaces the old one by asio::post to each worker.
#pragma once

#include <netinet/in.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sched/backend.h"

namespace vsc::director {

struct ViewServer {
  std::string id;
  uint32_t slot = 0;        // stable index for per-worker counters (assigned at first registration)
  sockaddr_in udp{};        // the server's lookup-udp endpoint
  sockaddr_in tcp{};        // the server's lookup-tcp endpoint
  sched::Backend backend;   // weight, availability and load as the schedulers see them
};

struct ClusterView {
  uint64_t version = 0;
  std::string scheduler;             // name of the scheduler the workers must run
  uint32_t persistence_timeout_s = 0;
  uint32_t persistence_netmask = 0xffffffff;  // host byte order
  std::vector<ViewServer> servers;   // every registered server, sorted by id
};

using ViewPtr = std::shared_ptr<const ClusterView>;

}  // namespace vsc::director
