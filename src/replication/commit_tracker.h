// CommitTracker: decides when a sequenced write may be answered (DESIGN §7 commit policies) and
// which replicas disagree. Pure; the director feeds it the replicas that must take part when the
// entry is sequenced and every ack as it arrives.
//
// - Policy `all` (default): every replica that was not DOWN when the entry was sequenced must
//   ack; `majority`: more than half of them; `one`: any one. A replica that goes DOWN before
//   acking is dropped from the entry's set (Forget), so a crash does not block commits.
// - Outcomes are compared: the answer is the outcome of the majority of the replicas that acked
//   (ties: the first ack). Replicas whose outcome (code, rows changed, checksum) or digest differs
//   from it are reported as divergent, once.
// - A replica's ack counts once it arrives, even if the replica goes DOWN afterwards. Acks from
//   replicas outside the entry's set, duplicate acks, and acks for unknown seqs are ignored.
// - Late acks (after the entry was decided under `majority` or `one`) are still compared with
//   the decided outcome; a replica that disagrees is returned by TakeLateDivergences(), once.
//   The last kDecidedKept decided entries are remembered for this.
// - If every replica of an entry goes DOWN before any acks, the entry is decided with
//   `unacknowledged` set: there is no outcome to answer with (it is in the log, and replicas
//   apply it when they return).
// Thread: one owner (the director's control thread).
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/status.h"
#include "replication/entry.h"

namespace vsc::replication {

enum class CommitPolicy { kAll, kMajority, kOne };
Result<CommitPolicy> ParseCommitPolicy(std::string_view name);  // "all", "majority", "one"
std::string_view CommitPolicyName(CommitPolicy policy);

struct Decision {
  uint64_t seq = 0;
  EntryResult result;                  // the agreed outcome
  std::vector<std::string> divergent;  // replicas whose outcome or digest disagreed
  Digest digest{};                     // the agreed digest after seq (for SetAgreedDigest)
  bool unacknowledged = false;         // no replica acked before all went DOWN; result is empty
};

// A replica whose ack arrived after its entry was decided and disagreed with the decision.
struct LateDivergence {
  uint64_t seq = 0;
  std::string replica;
  bool operator==(const LateDivergence&) const = default;
};

class CommitTracker {
 public:
  explicit CommitTracker(CommitPolicy policy) : policy_(policy) {}

  // A new entry and the replicas that must take part. With no replica at all the entry cannot
  // commit: Unavailable ("no replica is up; the write was not applied").
  Status Track(uint64_t seq, const std::set<std::string>& replicas);
  // An ack from `replica` for `seq`. Returns the decisions that became final (in seq order; an
  // entry is decided only after every earlier one, so answers go out in order).
  std::vector<Decision> OnAck(const std::string& replica, const EntryResult& result,
                              const Digest& digest_after);
  // A replica went DOWN: it no longer counts for any pending entry.
  std::vector<Decision> Forget(const std::string& replica);
  // Replicas found divergent by late acks since the last call (call after OnAck).
  std::vector<LateDivergence> TakeLateDivergences();
  static constexpr size_t kDecidedKept = 4096;
  size_t pending() const { return entries_.size(); }
  CommitPolicy policy() const { return policy_; }

 private:
  struct Pending {
    std::set<std::string> replicas;  // must take part; an acked replica stays even if Forgotten
    std::vector<std::pair<std::string, std::pair<EntryResult, Digest>>> acks;  // arrival order
  };
  // A decided entry whose set still has replicas that have not acked (for late comparison).
  struct Decided {
    EntryResult result;
    Digest digest{};
    std::set<std::string> waiting;
  };
  bool Ready(const Pending& p) const;
  static Decision Decide(uint64_t seq, const Pending& p);
  std::vector<Decision> Drain();
  CommitPolicy policy_;
  std::map<uint64_t, Pending> entries_;
  std::map<uint64_t, Decided> decided_;
  std::vector<LateDivergence> late_;
};

}  // namespace vsc::replication
