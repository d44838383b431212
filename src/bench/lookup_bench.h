// The lookup load generator behind `vsc bench lookup` (seed 000's test system: lookup loss and
// latency against send rate).
//
// Closed loop (rate == 0): `concurrency` worker threads, each with exactly one request
// outstanding; the next is sent as soon as the answer (or the timeout) arrives.
// Open loop (rate > 0): requests are scheduled at fixed intended send times (rate/concurrency per
// worker, workers staggered: OpenLoopScheduleOf) and latency is measured from the INTENDED send
// time, so a stalled server cannot hide its stall by slowing the sender (no coordinated
// omission). Every scheduled request is sent, never before its time: one whose time passed
// while the worker did not run goes as soon as it runs again, even after the sending period,
// its lateness counted in its latency. So sent + send_failures == ScheduledSends(options),
// however the threads were scheduled. Each worker keeps any number of requests outstanding on
// one non-blocking socket and matches answers by request_id; over TCP it pipelines on one
// connection.
//
// UDP answers are accepted from any source address (in `dr` mode the real server answers).
// After the sending period every outstanding request gets its full timeout, so at the end
// answered + lost == sent exactly. Latency percentiles cover answers with status ok.
//
// RunLookupBench blocks the calling thread for about duration + timeout, calling `progress`
// once a second from that thread. It reads time only through `clock` (thread safe; a RealClock
// in practice, since the workers wait on sockets in real time). Returns InvalidArgument for bad
// options and Unavailable when the target cannot be resolved or a TCP connection fails at start.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/status.h"

namespace vsc::bench {

struct LookupBenchOptions {
  std::string target;  // udp://HOST:PORT or tcp://HOST:PORT
  double duration_s = 10;
  int concurrency = 16;  // worker threads
  int min_ids = 1, max_ids = 10;
  uint64_t max_id = 2'000'000;  // ids are drawn uniformly from 1..max_id
  double rate = 0;              // requests/s over all workers; 0 = closed loop
  uint64_t seed = 1;
  Duration timeout = std::chrono::milliseconds(200);
};

// Validates options without touching the network.
Status CheckLookupBenchOptions(const LookupBenchOptions& options);

// Open loop: worker `index` (of options.concurrency) sends its k-th request (k = 0, 1, ...) at
// start + first + k * interval, for every such time before start + duration. Its request ids
// are (index << 40) | (k + 1).
struct OpenLoopSchedule {
  Duration interval{0};
  Duration first{0};
};
OpenLoopSchedule OpenLoopScheduleOf(const LookupBenchOptions& options, int index);
// The number of requests an open-loop run schedules, over every worker. Options must be valid
// with rate > 0.
uint64_t ScheduledSends(const LookupBenchOptions& options);

// Counters and figures of the last second, reported while the run goes on.
struct ProgressLine {
  double elapsed_s = 0;
  uint64_t sent = 0, answered = 0, lost = 0, errors = 0;  // totals so far
  uint64_t in_flight = 0;
  double requests_per_s = 0;  // answers in the last interval, per second
  double lookups_per_s = 0;
  double mean_us = 0;  // mean latency of the last interval's ok answers

  // "  3.0 s  sent 30012  answered 30010 (10003/s, 55012 lookups/s)  lost 0  errors 0  ..."
  std::string ToString() const;
};

struct LookupBenchReport {
  std::string target;
  double duration_s = 0;  // the sending period
  int concurrency = 0;
  double rate = 0;
  int min_ids = 0, max_ids = 0;
  uint64_t max_id = 0;  // ids were drawn from 1..max_id
  uint64_t seed = 0;
  double timeout_ms = 0;

  uint64_t sent = 0;          // requests handed to the socket
  uint64_t answered = 0;      // requests answered (any status), answered + lost == sent
  uint64_t lost = 0;          // requests with no answer within the timeout
  uint64_t errors = 0;        // answers with a non-ok status (part of answered)
  uint64_t send_failures = 0; // requests the socket refused (not part of sent)
  uint64_t stale = 0;         // late, duplicate or undecodable answers, ignored
  uint64_t lookups = 0;       // ids answered in ok answers
  uint64_t found = 0;         // of those, ids found

  double requests_per_s = 0;  // answered / duration
  double lookups_per_s = 0;
  double loss_pct = 0;  // lost / sent
  double p50_us = 0, p90_us = 0, p99_us = 0, p999_us = 0, max_us = 0, mean_us = 0;
  std::string first_error;  // the first socket error a worker met, empty when none
  std::vector<ProgressLine> progress;

  std::string ToJson() const;
  // A two-column table of the figures above, for the terminal.
  std::string SummaryTable() const;
  // Empty, or why the figures may not measure what was meant: most ids not found means the
  // service holds fewer records than the ids drawn (1..max_id).
  std::string Warning() const;
};

Result<LookupBenchReport> RunLookupBench(const LookupBenchOptions& options, const Clock& clock,
                                         const std::function<void(const ProgressLine&)>& progress);

}  // namespace vsc::bench
