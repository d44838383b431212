#include "director/promotion.h"

#include <map>

#include "replication/digest.h"

namespace vsc::director {

std::optional<HeadChoice> PickHead(const std::vector<HeadCandidate>& candidates) {
  if (candidates.empty()) return std::nullopt;
  uint64_t top = 0;
  for (const HeadCandidate& c : candidates) top = std::max(top, c.applied_seq);
  // Digests at the head: how many hold each, and the replica to copy the schema from.
  struct Tally {
    size_t count = 0;
    const HeadCandidate* source = nullptr;
  };
  std::map<replication::Digest, Tally> tallies;
  for (const HeadCandidate& c : candidates) {
    if (c.applied_seq != top) continue;
    Tally& t = tallies[c.digest];
    t.count++;
    const bool better = t.source == nullptr || (c.has_schema && !t.source->has_schema) ||
                        (c.has_schema == t.source->has_schema && c.id < t.source->id);
    if (better) t.source = &c;
  }
  const Tally* best = nullptr;
  for (const auto& [digest, t] : tallies) {
    if (best == nullptr || t.count > best->count ||
        (t.count == best->count && t.source->id < best->source->id)) {
      best = &t;
    }
  }
  HeadChoice h;
  h.seq = top;
  h.digest = best->source->digest;
  h.source = best->source->id;
  return h;
}

HeadChoice DecideRebase(HeadChoice head, uint64_t log_last_seq,
                        const std::optional<replication::Digest>& log_agreed_at_head) {
  const std::string at = "seq " + std::to_string(head.seq) + " (" + head.source + ", digest " +
                         replication::DigestHex(head.digest).substr(0, 16) + ")";
  if (head.seq == 0) {
    head.rebase = false;
    head.reason = "every replica is at seq 0 (the bootstrap, which this log starts from)";
  } else if (head.seq > 0 && head.seq <= log_last_seq && log_agreed_at_head == head.digest) {
    head.rebase = false;
    head.reason = "this log holds the replicas' head " + at;
  } else {
    head.rebase = true;
    head.reason =
        "the log restarts after the replicas' head " + at +
        (head.seq < log_last_seq ? "; its seq " + std::to_string(head.seq + 1) + ".." +
                                       std::to_string(log_last_seq) + " were applied by no replica"
                                 : "");
  }
  return head;
}

}  // namespace vsc::director
