// Benchmark scenarios of the core cluster (`vsc bench director-cpu | rs-lookup | scaling | loss`):
// each builds (or reuses) the resource database, starts a LocalCluster of child processes on
// 127.0.0.1, drives it with RunLookupBench and returns a printable table plus the same figures
// as JSON. All traffic stays on 127.0.0.1.
//
//   director-cpu  director + 2 RS at a fixed rate: director CPU µs per forwarded request and its
//                 share of the cluster's CPU, next to a bare recvmmsg/sendmmsg forwarder (a forked
//                 one-thread child process, measured like the director) fed the same traffic and
//                 sending to the same real servers.
//   rs-lookup     one real server alone, closed loop: requests/s and requests per CPU-second of
//                 the real server process.
//   scaling       1 RS alone, then director + 1..max_rs RS, each RS held to `quota` CPUs by a
//                 cgroup: closed-loop throughput and ratio to director + 1 RS.
//   loss          director + 2 RS: closed-loop maximum, then fixed offered loads at given
//                 percentages of it: loss and latency percentiles.
//
// Every Run* blocks the calling thread for the scenario's steps (about duration_s + 1 s each,
// plus cluster start-up), logs each step through `log`, reads time only through `clock`, and
// stops its clusters before returning. Errors: the first failing step's status (a cluster that
// does not start, a cgroup that cannot be made, a database that cannot be built...); per-step
// logs stay in the work directory then.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/status.h"

namespace vsc::bench {

struct ScenarioOptions {
  std::string vsc_binary;  // `vsc` to start as director and real servers
  std::string db_path = "/tmp/vsc-bench-resources.db";  // built when missing, reused otherwise
  uint64_t records = 2'000'000;
  std::string work_dir;   // logs, ready files and keys; "" = /tmp/vsc-bench-<pid>
  double duration_s = 5;  // sending period of each step
  int concurrency = 16;   // load generator worker threads
  int min_ids = 1, max_ids = 10;
  uint32_t director_workers = 1;
  uint32_t rs_workers = 1;
  double timeout_ms = 200;
  std::string log_level = "warn";  // of the child processes
};

struct DirectorCpuOptions {
  ScenarioOptions common;
  double rate = 20'000;  // offered requests/s
  int rounds = 3;        // alternations director / bare forwarder, summed
};

struct RsLookupOptions {
  ScenarioOptions common;
};

struct ScalingOptions {
  ScenarioOptions common;
  int max_rs = 4;
  double quota = 0.25;  // CPUs per real server
};

struct LossOptions {
  ScenarioOptions common;
  std::vector<double> load_pcts = {25, 50, 75, 100, 125};  // of the closed-loop maximum
};

struct ScenarioReport {
  std::string name;
  std::string table;  // human-readable figures, ends with a newline
  nlohmann::json json;
};

using ScenarioLog = std::function<void(const std::string& line)>;

// Makes sure `path` holds the deterministic resource database of `records` records: builds it
// (with progress through `log`) when missing; accepts an existing file when id `records` is
// found and id `records + 1` is not. Otherwise FailedPrecondition naming the file to delete.
Status EnsureResourceDb(const std::string& path, uint64_t records, const ScenarioLog& log);

Result<ScenarioReport> RunDirectorCpu(const DirectorCpuOptions& options, const Clock& clock,
                                      const ScenarioLog& log);
Result<ScenarioReport> RunRsLookup(const RsLookupOptions& options, const Clock& clock,
                                   const ScenarioLog& log);
Result<ScenarioReport> RunScaling(const ScalingOptions& options, const Clock& clock,
                                  const ScenarioLog& log);
Result<ScenarioReport> RunLoss(const LossOptions& options, const Clock& clock,
                               const ScenarioLog& log);

}  // namespace vsc::bench
