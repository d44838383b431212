// Steps of `vsc bench ring` driven as redis-benchmark drives SET and GET (issue 9's peer
// comparison): one epoll thread holding `connections` connections, each straight to a relay
// node (prefetch routing, from the ring table) or each to the director (which forwards), each
// with one request in flight at a time (a closed loop, as redis-benchmark -P 1): a FETCH of the
// newest clip of one of that node's groups, or a PUBLISH of a clip to one. The blocking
// per-thread clients of the other modes cost this 2-core machine a thread switch per request,
// which redis-benchmark's event loop does not pay; these steps do not either, so their figures
// are the ones to put beside Redis Cluster's and twemproxy's.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "ring/ring.h"

namespace vsc::bench {

// The name of the bench's group g: "bench-g" (every step of `vsc bench ring` uses these).
std::string BenchGroup(int g);

struct LoopOptions {
  bool publish = false;  // PUBLISH (acked once copied) instead of FETCH
  int connections = 50;
  int groups = 64;           // groups BenchGroup(0) ... BenchGroup(groups - 1)
  size_t clip_bytes = 1024;  // the size every fetched clip must have
  double duration_s = 3;
  // Every connection to this address instead (the director's ring port, which forwards each
  // fetch to the owner: the analogue of redis-benchmark against twemproxy); port 0 = none.
  std::string via_host;
  uint16_t via_port = 0;
};

// `newest[g]`: the newest seq of group g (each fetch asks for it alone; unused for publishes).
// The report:
// {requests, errors, mean_us, p50_us, p99_us, requests_per_s, connections}; errors count wrong
// answers and broken connections (a broken connection is not reopened).
Result<nlohmann::json> RunLoop(const ring::Ring& table, const LoopOptions& o,
                               const std::vector<uint64_t>& newest, const Clock& clock);

}  // namespace vsc::bench
