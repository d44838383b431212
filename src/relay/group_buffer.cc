#include "relay/group_buffer.h"

#include <algorithm>

namespace vsc::relay {

GroupBuffer::GroupBuffer(BufferLimits limits) : limits_(limits) {}

uint64_t GroupBuffer::Append(ClipBytes bytes) {
  Insert(last_seq_ + 1, std::move(bytes));
  return last_seq_;
}

bool GroupBuffer::Insert(uint64_t seq, ClipBytes bytes) {
  if (seq == 0) return false;
  if (seq > last_seq_) {
    bytes_ += bytes->size();
    clips_.push_back({seq, std::move(bytes)});
    last_seq_ = seq;
    Evict();
    return true;
  }
  // An older clip that arrived late (copies of one group may overtake each other, and older
  // clips restored to a new successor follow the live ones): stored in its place unless held
  // already, or older than everything held while the bounds are reached (it would be the
  // first dropped).
  if (clips_.empty()) return false;
  if (seq < clips_.front().seq &&
      (clips_.size() + 1 > limits_.max_clips || bytes_ + bytes->size() > limits_.max_bytes)) {
    return false;
  }
  auto it = std::lower_bound(clips_.begin(), clips_.end(), seq,
                             [](const StoredClip& c, uint64_t s) { return c.seq < s; });
  if (it != clips_.end() && it->seq == seq) return false;
  bytes_ += bytes->size();
  clips_.insert(it, {seq, std::move(bytes)});
  Evict();
  return true;
}

void GroupBuffer::Evict() {
  // The newest clip always stays, even alone over the byte bound: it is what was just acked.
  while (clips_.size() > 1 && (clips_.size() > limits_.max_clips || bytes_ > limits_.max_bytes)) {
    bytes_ -= clips_.front().bytes->size();
    clips_.pop_front();
  }
}

std::vector<StoredClip> GroupBuffer::Since(uint64_t since, size_t max) const {
  auto it = std::upper_bound(clips_.begin(), clips_.end(), since,
                             [](uint64_t s, const StoredClip& c) { return s < c.seq; });
  std::vector<StoredClip> out;
  for (; it != clips_.end() && out.size() < max; ++it) out.push_back(*it);
  return out;
}

bool GroupBuffer::Gone(uint64_t since) const {
  return since < last_seq_ && first_seq() > since + 1;
}

}  // namespace vsc::relay
