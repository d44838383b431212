// DecideCatchUp: what the director does with a real server that registers with a replica
// (DESIGN §7 "Catch-up"): stream the missing entries from the log, or have it copy a snapshot
// from a healthy peer first. Pure: the caller gathers the log's position and the agreed digest.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "replication/entry.h"

namespace vsc::director {

// What the real server reported in its Register.
struct ReplicaPosition {
  uint64_t applied_seq = 0;
  std::optional<replication::Digest> digest;  // nullopt when absent or not 32 bytes
  std::string content_checksum;               // meaningful only with applied_seq == 0
};

// What the director's log holds.
struct LogPosition {
  uint64_t first_seq = 1;  // oldest entry held (last_seq + 1 when empty)
  uint64_t last_seq = 0;
  std::string bootstrap_checksum;  // the content every replica starts from at seq 0
};

struct CatchUpPlan {
  enum class Action { kStream, kSnapshot };
  Action action = Action::kStream;
  bool needs_catch_up = false;  // kStream: the replica is behind the head (CATCHING_UP, no reads)
  uint64_t from_seq = 1;        // kStream: the first entry to send
  std::string reason;           // kSnapshot: why, for the log and InstallSnapshot.reason
};

// The rules, in order (the first that matches decides):
//  1. applied_seq == 0 and the content checksum differs from the bootstrap's -> snapshot;
//  2. applied_seq beyond the log's last seq (the replica saw a history this log lacks) -> snapshot;
//  3. the agreed digest at applied_seq is known and the replica's differs (or is missing)
//     -> snapshot (it applied a different stream);
//  4. the log no longer holds applied_seq + 1 (trimmed) -> snapshot;
//  5. otherwise stream from applied_seq + 1; catching up while applied_seq < last_seq.
// `agreed` is the digest the replicas agreed on at applied_seq, nullopt when unknown (not
// recorded, trimmed, or seq 0): the replica is then accepted on its word and checked against
// its peers from the next entry on.
CatchUpPlan DecideCatchUp(const ReplicaPosition& replica, const LogPosition& log,
                          const std::optional<replication::Digest>& agreed);

}  // namespace vsc::director
