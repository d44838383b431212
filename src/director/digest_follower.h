// DigestFollower: the director's half of the digest chain (DESIGN §7). The director follows
// every in-sync replica's chain from the outcomes in its acks; replicas that agree share each
// step (one SHA-256 per distinct (previous digest, outcome) per seq, not one per replica), and
// the digests the commit decisions agreed on are kept for the recent seqs, so a catching-up
// replica can be checked against them.
//
// Pure: no I/O, no clock. Owned by the Replicator, control thread. The log keeps older agreed
// digests; the Replicator asks it when AgreedAt has none.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "replication/digest.h"
#include "replication/entry.h"

namespace vsc::director {

class DigestFollower {
 public:
  // `max_agreed`: how many recent agreed digests are kept in memory.
  explicit DigestFollower(size_t max_agreed = 262144) : max_agreed_(max_agreed) {}

  // The chain's next digest after `prev` for `entry` with `result` (memoized per seq).
  replication::Digest Step(const replication::Digest& prev, const replication::Entry& entry,
                           const replication::EntryResult& result);
  // Steps at seqs <= `seq` will not be asked for again.
  void ForgetSteps(uint64_t seq);
  size_t memoized_seqs() const { return memo_.size(); }

  // The digest the replicas agreed on at `seq` (decisions arrive in seq order; a jump starts a
  // new run). The first Record after construction may be at any seq.
  void RecordAgreed(uint64_t seq, const replication::Digest& digest);
  std::optional<replication::Digest> AgreedAt(uint64_t seq) const;
  // The newest agreed (seq, digest), if any.
  std::optional<std::pair<uint64_t, replication::Digest>> LatestAgreed() const;

 private:
  struct Variant {  // one chain step, shared by every replica that took it
    replication::Digest prev;
    replication::EntryResult result;
    replication::Digest next;
  };

  size_t max_agreed_;
  std::map<uint64_t, std::vector<Variant>> memo_;
  std::deque<replication::Digest> agreed_;  // for seqs agreed_first_..
  uint64_t agreed_first_ = 1;
};

}  // namespace vsc::director
