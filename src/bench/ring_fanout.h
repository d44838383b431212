// The fan-out step of `vsc bench ring` (issue 9, seed 002's many listeners): `subscribers`
// concurrent subscriptions over `groups` groups (subscriber i listens to group i % groups), each
// its own TCP connection to the group's owner, held by `threads` epoll threads of this process;
// one talker publishes one clip per group per second (spread evenly over the second) with its
// send time in the clip's first 8 bytes, and every delivery's latency is its arrival time minus
// that time (one process, one monotonic clock). The first second is a warm-up (subscriptions
// settle) and is not measured; a subscriber counts as held once it received a clip.
//
// Each subscription is one file descriptor of this process: the step checks RLIMIT_NOFILE first
// (and raises the soft limit to the hard one when needed) and refuses, saying how many it needs,
// rather than failing midway. Returns fanout.{subscribers, held, groups, publishes,
// expected_deliveries, deliveries, lost, errors, p50_us, p99_us, max_us, mean_us}.
#pragma once

#include <nlohmann/json.hpp>

#include "bench/scenarios.h"
#include "client/ring_client.h"
#include "common/clock.h"
#include "common/status.h"

namespace vsc::bench {

struct FanoutOptions {
  int subscribers = 10000;
  int groups = 200;
  double duration_s = 5;  // measured seconds after the warm-up
  int threads = 4;        // epoll threads holding the subscriptions
  size_t clip_bytes = 256;
};

Result<nlohmann::json> RunFanout(const client::RingClientOptions& ring, const FanoutOptions& o,
                                 const Clock& clock, const ScenarioLog& log);

}  // namespace vsc::bench
