// `vsc bench ring` (issue 9): starts its own director and relay nodes (LocalCluster) and, in one
// run, side by side, measures publish round trips of the clip relay in each client mode —
// prefetch (straight to the owner), ask (the director names the owner first), via-director
// (the director forwards) — and `fingers` (clients sending to a random node with a current
// table, so the request travels along Chord's fingers; hops are reported) and `fetch` (the
// newest clip of a group, prefetch mode; the peer of a Redis GET). Per mode: mean, p50, p99
// and requests/s over all client threads. Then the fan-out step (10,000 subscribers by
// default, one publish per group per second, publish -> delivery latency). Last, the kill
// step: the owner of a busy group is killed with SIGKILL under load and every acked clip is
// looked for afterwards.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bench/ring_fanout.h"
#include "bench/scenarios.h"
#include "common/clock.h"
#include "common/status.h"

namespace vsc::bench {

struct RingBenchOptions {
  ScenarioOptions common;  // vsc binary, db, work dir, duration, concurrency (clients)
  int nodes = 6;
  size_t clip_bytes = 1024;
  int groups = 64;
  // The sweep (empty: none): prefetch, ask and via-director for each pair.
  std::vector<int> sweep_clients;
  std::vector<size_t> sweep_clip_bytes;
  // The fan-out step (ring_fanout.h); subscribers 0: none.
  FanoutOptions fanout;
};

// The report:
// modes.<prefetch|ask|via_director|fingers|fetch|fetch_via_director|fetch_loop|
// fetch_loop_via_director>.{mean_us,p50_us,p99_us,requests_per_s,errors[,mean_hops]}
// (fetch_loop*: one event loop, ring_fetch_loop.h), ratios prefetch/via_director of publish p50
// and mean, of fetch p50 and of fetch_loop p50, and
// sweep[].{clients,clip_bytes,modes.<prefetch|ask|via_director>,prefetch_p50_over_via_director}
// fanout.{subscribers,held,p50_us,p99_us,...} (ring_fanout.h) and
// kill.{killed,acked,acked_after_kill,acked_lost,failover_ms,fetch_error}.
Result<ScenarioReport> RunRingBench(const RingBenchOptions& options, const Clock& clock,
                                    const ScenarioLog& log);

// The printed table of a report (ring_report.cc): every mode, the ratios, the sweep, the fan-out
// and the kill step.
std::string FormatRingReport(const nlohmann::json& report, const std::string& sweep_table);

}  // namespace vsc::bench
