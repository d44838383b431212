// The write load generator behind `vsc bench write` (issue 3 benchmarks; seed 000 §5.2.4:
// committed inserts / updates / deletes per second across the replicas).
//
// Writes go to the director's write port (WriteClient, one TCP connection per worker) against
// the resource table resources(id INTEGER PRIMARY KEY, node TEXT NOT NULL, size INTEGER,
// updated_at INTEGER):
//   insert: INSERT INTO resources(node, size, updated_at) VALUES(?1, ?2, ?3) — the id is the
//           next rowid, so always above the loaded range and never a collision across runs;
//   update: UPDATE resources SET node = ?1, updated_at = ?2 WHERE id = ?3, id in 1..max_id;
//   delete: DELETE FROM resources WHERE id = ?1, id in 1..max_id;
//   mixed:  each statement one of the three, uniformly at random.
// A request carries `batch` statements applied atomically (batch 1 = one statement per request).
//
// Closed loop (rate == 0): `concurrency` workers, each with exactly one request outstanding.
// Open loop (rate > 0, in writes/s): requests are scheduled at fixed intended send times and
// pipelined on each worker's connection; latency runs from the INTENDED send time (no
// coordinated omission). A request unanswered `timeout` after it was sent is counted lost.
// Committed writes are the statements of requests answered ok (the commit policy was met).
//
// RunWriteBench blocks for about duration + timeout, calling `progress` once a second from the
// calling thread. Reads time through `clock`. InvalidArgument for bad options, Unavailable when
// a worker cannot connect at the start.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "proto/cluster_key.h"

namespace vsc::bench {

enum class WriteOp { kInsert, kUpdate, kDelete, kMixed };

Result<WriteOp> ParseWriteOp(std::string_view text);
std::string_view WriteOpName(WriteOp op);

struct WriteBenchOptions {
  std::string target;  // HOST:PORT of the director's write port
  WriteOp op = WriteOp::kInsert;
  double rate = 0;     // writes (statements) per second over all workers; 0 = closed loop
  int batch = 1;       // statements per request, applied atomically
  int concurrency = 16;
  double duration_s = 10;
  uint64_t max_id = 2'000'000;  // the loaded id range: updates and deletes pick from 1..max_id
  uint64_t seed = 1;
  Duration timeout = std::chrono::seconds(10);
};

Status CheckWriteBenchOptions(const WriteBenchOptions& options);

struct WriteProgress {
  double elapsed_s = 0;
  uint64_t committed = 0, errors = 0, lost = 0;  // totals so far (writes, error answers, requests)
  double writes_per_s = 0;                       // committed in the last interval, per second
  std::string ToString() const;
};

struct WriteBenchReport {
  std::string target;
  std::string op;
  double duration_s = 0;
  double rate = 0;
  int batch = 0;
  int concurrency = 0;

  uint64_t requests_sent = 0;
  uint64_t requests_ok = 0;
  uint64_t error_answers = 0;  // ok=false answers (refused or failed; nothing applied)
  uint64_t lost = 0;           // no answer within the timeout
  uint64_t committed_writes = 0;
  int64_t rows_changed = 0;
  uint64_t last_seq = 0;
  double writes_per_s = 0;
  double requests_per_s = 0;
  double p50_us = 0, p90_us = 0, p99_us = 0, p999_us = 0, max_us = 0, mean_us = 0;
  std::string first_error;
  std::vector<WriteProgress> progress;

  std::string ToJson() const;
  std::string SummaryTable() const;
};

Result<WriteBenchReport> RunWriteBench(const WriteBenchOptions& options,
                                       const proto::ClusterKey& key, const Clock& clock,
                                       const std::function<void(const WriteProgress&)>& progress);

}  // namespace vsc::bench
