// PickHead and DecideRebase: where a director that has just taken the sequencer lease (issue 11,
// promotion) resumes the log, from where the replicas that registered with it stand. Pure: the
// Replicator gathers the positions and applies the answer (replicator_promotion.cc).
//
// The rule: the head is the highest applied seq any replica reports. Under policy `all` every
// in-sync replica held every acknowledged write, and under `majority` or `one` at least one
// replica did, so the highest position holds every acknowledged write of the old director; an
// entry that some replica applied and that was never acknowledged cannot be taken back, so it
// stays too, and every other replica comes up to it. When several replicas stand at the head
// with different digests (they applied different histories), the digest most of them hold wins
// (ties: the smallest id's), and the others are checked against it at registration and rebuilt.
//
// The director keeps its own log when that log already holds the head's history: it holds the
// head seq and recorded the same agreed digest there (this director sequenced the head itself,
// e.g. it lost and regained the lease while no other director sequenced). Otherwise it rebases:
// its log restarts after the head (entries it holds beyond it were applied nowhere), its schema
// becomes the head replica's, and replicas behind the head copy a snapshot from one at it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "replication/entry.h"

namespace vsc::director {

// One registered replica's report.
struct HeadCandidate {
  std::string id;
  uint64_t applied_seq = 0;
  replication::Digest digest{};
  bool has_schema = false;  // its Register carried its schema (needed to rebase on it)
};

struct HeadChoice {
  uint64_t seq = 0;
  replication::Digest digest{};
  std::string source;   // a replica at the head with that digest (its schema is adopted)
  bool rebase = false;  // the log restarts after `seq`; otherwise it is kept as it is
  std::string reason;   // for the log line and the status
};

// The head among `candidates` (rebase and reason not yet decided); nullopt when empty. A
// candidate without its schema is never the source while one at the head has it.
std::optional<HeadChoice> PickHead(const std::vector<HeadCandidate>& candidates);

// Keeps the log or rebases it on `head`: kept when the log holds head.seq and its agreed digest
// there (`log_agreed_at_head`, nullopt when not recorded) is head.digest, or when
// every replica is at seq 0 (every history starts from the bootstrap this log records).
HeadChoice DecideRebase(HeadChoice head, uint64_t log_last_seq,
                        const std::optional<replication::Digest>& log_agreed_at_head);

}  // namespace vsc::director
