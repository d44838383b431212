#include "replication/commit_tracker.h"

#include <algorithm>

namespace vsc::replication {
namespace {

// What replicas must agree on: the outcome (not SQLite's wording) and the digest.
bool SameOutcome(const EntryResult& a, const Digest& da, const EntryResult& b, const Digest& db) {
  return a.code == b.code && a.rows_changed == b.rows_changed && a.checksum == b.checksum &&
         da == db;
}

}  // namespace

Result<CommitPolicy> ParseCommitPolicy(std::string_view name) {
  if (name == "all") return CommitPolicy::kAll;
  if (name == "majority") return CommitPolicy::kMajority;
  if (name == "one") return CommitPolicy::kOne;
  return InvalidArgument("commit policy must be all, majority or one, not '" + std::string(name) +
                         "'");
}

std::string_view CommitPolicyName(CommitPolicy policy) {
  switch (policy) {
    case CommitPolicy::kAll:
      return "all";
    case CommitPolicy::kMajority:
      return "majority";
    case CommitPolicy::kOne:
      return "one";
  }
  return "unknown";
}

Status CommitTracker::Track(uint64_t seq, const std::set<std::string>& replicas) {
  if (replicas.empty()) return Unavailable("no replica is up; the write was not applied");
  if (entries_.count(seq) != 0 || decided_.count(seq) != 0) {
    return InvalidArgument("seq " + std::to_string(seq) + " is tracked already");
  }
  entries_[seq].replicas = replicas;
  return Status::Ok();
}

bool CommitTracker::Ready(const Pending& p) const {
  if (p.replicas.empty()) return true;
  const size_t acked = p.acks.size();
  switch (policy_) {
    case CommitPolicy::kAll:
      return acked == p.replicas.size();
    case CommitPolicy::kMajority:
      return 2 * acked > p.replicas.size();
    case CommitPolicy::kOne:
      return acked >= 1;
  }
  return false;
}

Decision CommitTracker::Decide(uint64_t seq, const Pending& p) {
  Decision d;
  d.seq = seq;
  d.result.seq = seq;
  if (p.acks.empty()) {
    d.unacknowledged = true;
    d.result.code = -1;
    d.result.error =
        "every replica went down before acknowledging; the write is in the log and is applied "
        "when a replica returns";
    return d;
  }
  // Group size per ack (quadratic in the replica count, which is small); the first ack of the
  // largest group wins, so ties go to the earliest ack.
  size_t best = 0, best_count = 0;
  for (size_t i = 0; i < p.acks.size(); ++i) {
    size_t count = 0;
    for (const auto& other : p.acks) {
      if (SameOutcome(p.acks[i].second.first, p.acks[i].second.second, other.second.first,
                      other.second.second)) {
        ++count;
      }
    }
    if (count > best_count) {
      best = i;
      best_count = count;
    }
  }
  const auto& [result, digest] = p.acks[best].second;
  d.result = result;
  d.result.seq = seq;
  d.digest = digest;
  for (const auto& [replica, outcome] : p.acks) {
    if (!SameOutcome(result, digest, outcome.first, outcome.second)) d.divergent.push_back(replica);
  }
  return d;
}

std::vector<Decision> CommitTracker::Drain() {
  std::vector<Decision> out;
  while (!entries_.empty() && Ready(entries_.begin()->second)) {
    auto it = entries_.begin();
    Decision d = Decide(it->first, it->second);
    Decided later;
    later.result = d.result;
    later.digest = d.digest;
    later.waiting = it->second.replicas;
    for (const auto& ack : it->second.acks) later.waiting.erase(ack.first);
    if (!later.waiting.empty() && !d.unacknowledged) {
      decided_[it->first] = std::move(later);
      if (decided_.size() > kDecidedKept) decided_.erase(decided_.begin());
    }
    entries_.erase(it);
    out.push_back(std::move(d));
  }
  return out;
}

std::vector<Decision> CommitTracker::OnAck(const std::string& replica, const EntryResult& result,
                                           const Digest& digest_after) {
  const uint64_t seq = result.seq;
  if (auto it = entries_.find(seq); it != entries_.end()) {
    Pending& p = it->second;
    if (p.replicas.count(replica) == 0) return {};
    for (const auto& ack : p.acks) {
      if (ack.first == replica) return {};
    }
    p.acks.push_back({replica, {result, digest_after}});
    return Drain();
  }
  if (auto it = decided_.find(seq); it != decided_.end()) {
    Decided& d = it->second;
    if (d.waiting.erase(replica) == 0) return {};
    if (!SameOutcome(d.result, d.digest, result, digest_after)) late_.push_back({seq, replica});
    if (d.waiting.empty()) decided_.erase(it);
  }
  return {};
}

std::vector<Decision> CommitTracker::Forget(const std::string& replica) {
  for (auto& [seq, p] : entries_) {
    const bool acked = std::any_of(p.acks.begin(), p.acks.end(),
                                   [&](const auto& ack) { return ack.first == replica; });
    if (!acked) p.replicas.erase(replica);
  }
  for (auto it = decided_.begin(); it != decided_.end();) {
    it->second.waiting.erase(replica);
    it = it->second.waiting.empty() ? decided_.erase(it) : std::next(it);
  }
  return Drain();
}

std::vector<LateDivergence> CommitTracker::TakeLateDivergences() {
  return std::exchange(late_, {});
}

}  // namespace vsc::replication
