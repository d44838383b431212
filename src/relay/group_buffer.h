// GroupBuffer: the bounded buffer of one group's recent clips (DESIGN.md §8), on the group's
// owner and on each of its r - 1 copies. Clips are numbered by group seq from 1 without gaps
// on the owner; a copy stores the owner's numbers. The oldest clips are dropped once either
// bound — clip count or total bytes — is passed, so a listener that fell further behind than
// the buffer holds is told what it missed (Gone) rather than silently skipping it.
//
// Pure value; not thread safe (one worker owns each group). Clip bytes are shared immutable
// buffers, so handing a clip to many subscribers copies no bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

namespace vsc::relay {

using ClipBytes = std::shared_ptr<const std::vector<uint8_t>>;

struct StoredClip {
  uint64_t seq = 0;
  ClipBytes bytes;
};

struct BufferLimits {
  size_t max_clips = 1024;
  size_t max_bytes = 8 << 20;
};

class GroupBuffer {
 public:
  explicit GroupBuffer(BufferLimits limits);

  // The owner's append: the clip gets last_seq() + 1.
  uint64_t Append(ClipBytes bytes);
  // A copy from the owner, or a clip handed over, under the owner's seq: a later seq after a
  // gap is stored (the gap is what the owner dropped, or a copy still on its way), an older
  // one not held yet is stored in its place. False for seq 0, a seq held already, and one
  // older than every clip held when the bounds are reached (they would drop it at once).
  bool Insert(uint64_t seq, ClipBytes bytes);

  // The clips with seq > since, oldest first, at most `max`.
  std::vector<StoredClip> Since(uint64_t since, size_t max) const;
  // True when clips after `since` were dropped (the oldest held is past since + 1).
  bool Gone(uint64_t since) const;

  uint64_t last_seq() const { return last_seq_; }
  uint64_t first_seq() const { return clips_.empty() ? last_seq_ + 1 : clips_.front().seq; }
  size_t size() const { return clips_.size(); }
  size_t bytes() const { return bytes_; }

 private:
  void Evict();

  BufferLimits limits_;
  std::deque<StoredClip> clips_;  // ascending seq
  size_t bytes_ = 0;
  uint64_t last_seq_ = 0;
};

}  // namespace vsc::relay
