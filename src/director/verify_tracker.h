// VerifyTracker: the director's record of `vsc adm verify` runs (DESIGN §7). A run is a
// sequenced checksum marker; each replica expected at that seq reports its content checksum in
// its ack, and the report compares them with the checksum the commit decision agreed on (or,
// before the decision, with the one most replicas reported).
//
// Pure: no clock read (times are parameters), no I/O. Owned by the Replicator, control thread.
// Keeps the last `kept` runs.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/clock.h"

namespace vsc::director {

struct VerifyReplica {
  std::string id;
  std::string checksum;
  std::string status;  // OK, MISMATCH, PENDING, LOST (went down), TIMEOUT, SKIPPED (<state>)
};

struct VerifyReport {
  uint64_t seq = 0;
  bool complete = false;
  bool ok = false;       // complete, and every replica answered with the agreed checksum
  std::string expected;  // the majority checksum
  double elapsed_ms = 0;
  std::vector<VerifyReplica> replicas;
};

class VerifyTracker {
 public:
  explicit VerifyTracker(size_t kept = 32, Duration timeout = std::chrono::seconds(30))
      : kept_(kept), timeout_(timeout) {}

  // A marker was sequenced at `seq`: `expected` replicas owe a checksum; `skipped` (id -> its
  // replication state) are not streaming and are reported as SKIPPED.
  void Start(uint64_t seq, TimePoint now, std::set<std::string> expected,
             std::map<std::string, std::string> skipped);
  // A replica's checksum at `seq` (ignored when `seq` is no run).
  void OnChecksum(uint64_t seq, const std::string& id, const std::string& checksum);
  // The replica's session ended: runs still waiting for it report it LOST.
  void OnLost(const std::string& id);
  // The commit decision at `seq` agreed on `checksum`.
  void OnDecided(uint64_t seq, const std::string& checksum);
  // Runs older than the timeout report their missing replicas as TIMEOUT.
  void Tick(TimePoint now);

  std::optional<VerifyReport> Report(uint64_t seq, TimePoint now) const;
  uint64_t last_seq() const { return last_seq_; }

 private:
  struct Run {
    TimePoint started{};
    std::set<std::string> expected;
    std::map<std::string, std::string> checksums;
    std::set<std::string> lost;
    std::map<std::string, std::string> skipped;  // id -> state
    std::string agreed;                          // from the commit decision
    bool timed_out = false;
  };

  size_t kept_;
  Duration timeout_;
  std::map<uint64_t, Run> runs_;
  uint64_t last_seq_ = 0;
};

}  // namespace vsc::director
