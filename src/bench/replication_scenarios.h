// Benchmark scenario of replicated databases (`vsc bench replication`, issue 3 benchmarks, seed
// 000 §5.2.4-5.2.5): a LocalCluster of a director and N real servers with replication on (each
// RS its own copy of the resource database, durable: WAL, synchronous=NORMAL, policy `all`),
// driven through the director's write port (RunWriteBench) and its lookup port
// (RunLookupBench). Steps, each `duration_s` of sending, replicas caught up between steps:
//
//   single    closed loop, one statement per request, `concurrency` writers: committed
//             writes/s and latency for insert, update, delete;
//   batched   closed loop, `batch` statements per request, `batch_concurrency` writers;
//   latency   open loop at `latency_load_pct` % of each op's single-statement maximum: p50/p99
//             write latency (from the intended send time);
//   mixed     closed-loop lookups through the director alone, then while `mixed_update_rate`
//             updates/s flow: lookups/s of both and their ratio;
//   verify    a checksum marker at the end: every replica's content must be equal.
//
// RunReplicationBench blocks the calling thread for the whole run (about 12 steps of
// duration_s + catch-up, plus the database build on first use), logs each step through `log`,
// reads time through `clock`, and stops its cluster before returning. Errors: the first failing
// step's status (database, cluster start, a write bench that cannot connect, replicas that do
// not converge within a minute); the child processes' logs stay in the work directory then.
#pragma once

#include <cstdint>
#include <string>

#include "bench/scenarios.h"
#include "common/clock.h"
#include "common/status.h"

namespace vsc::bench {

struct ReplicationBenchOptions {
  ScenarioOptions common;  // db, records, work dir, duration, lookup workers, log level
  int real_servers = 4;
  std::string commit_policy = "all";
  int concurrency = 64;        // writers, one statement per request
  int batch = 100;             // statements per request in the batched step
  int batch_concurrency = 16;  // writers in the batched step
  double latency_load_pct = 50;
  double mixed_update_rate = 1000;  // updates/s during the mixed step
  bool mixed_only = false;          // skip the write steps (single, batched, latency)
};

Status CheckReplicationBenchOptions(const ReplicationBenchOptions& options);

// The report's table and JSON (`scenario` = "replication") hold every step's figures, the
// targets (>= 100,000 writes/s batched, >= 20,000/s single, mixed >= 95 % of read-only) with
// met / MISSED, and the final verification.
Result<ScenarioReport> RunReplicationBench(const ReplicationBenchOptions& options,
                                           const Clock& clock, const ScenarioLog& log);

}  // namespace vsc::bench
