#include "director/digest_follower.h"

namespace vsc::director {

using replication::Digest;

Digest DigestFollower::Step(const Digest& prev, const replication::Entry& entry,
                            const replication::EntryResult& result) {
  std::vector<Variant>& variants = memo_[entry.seq];
  for (Variant& v : variants) {
    if (v.prev == prev && v.result == result) return v.next;
  }
  Variant v{prev, result, replication::NextDigest(prev, entry, result)};
  variants.push_back(v);
  return v.next;
}

void DigestFollower::ForgetSteps(uint64_t seq) {
  memo_.erase(memo_.begin(), memo_.upper_bound(seq));
}

void DigestFollower::RecordAgreed(uint64_t seq, const Digest& digest) {
  if (agreed_.empty() || seq != agreed_first_ + agreed_.size()) {
    // Decisions come in seq order; a jump (after a restart or a lone undecided entry) starts
    // a new run.
    agreed_.clear();
    agreed_first_ = seq;
  }
  agreed_.push_back(digest);
  while (agreed_.size() > max_agreed_) {
    agreed_.pop_front();
    agreed_first_++;
  }
}

std::optional<Digest> DigestFollower::AgreedAt(uint64_t seq) const {
  if (seq >= agreed_first_ && seq < agreed_first_ + agreed_.size()) {
    return agreed_[seq - agreed_first_];
  }
  return std::nullopt;
}

std::optional<std::pair<uint64_t, Digest>> DigestFollower::LatestAgreed() const {
  if (agreed_.empty()) return std::nullopt;
  return std::pair{agreed_first_ + agreed_.size() - 1, agreed_.back()};
}

}  // namespace vsc::director
