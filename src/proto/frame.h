// TCP framing for control-plane messages: each frame is a 4-byte big-endian payload length
// followed by the payload (DESIGN.md §9, docs/protocol.md "Framing").
//
// FrameDecoder is sans-I/O: the socket shell Feed()s whatever bytes arrived, then calls Next()
// until it returns nullopt. Not thread safe; owned by the one coroutine reading the session.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "common/status.h"

namespace vsc::proto {

inline constexpr size_t kFrameHeaderBytes = 4;
inline constexpr size_t kDefaultMaxFrame = size_t{1} << 20;

class FrameDecoder {
 public:
  // max_frame bounds one payload; a peer announcing more is refused before any of it is
  // buffered. For sealed envelopes pass kMaxEnvelopeBytes (envelope.h).
  explicit FrameDecoder(size_t max_frame = kDefaultMaxFrame);

  // Appends bytes read from the stream. Ignored once the decoder has failed.
  void Feed(std::span<const uint8_t> bytes);

  // The next complete payload; nullopt when more bytes are needed. An error (InvalidArgument:
  // zero length or length over max_frame) is final: every later call returns it again and the
  // caller should close the connection, since the stream can no longer be resynchronised.
  Result<std::optional<std::vector<uint8_t>>> Next();

  // Bytes fed but not yet returned as frames.
  size_t buffered() const { return buf_.size() - pos_; }
  bool failed() const { return !failure_.ok(); }

 private:
  size_t max_frame_;
  // Unconsumed bytes are buf_[pos_..]. Consumed bytes are dropped lazily (when they are at least
  // half the buffer), so each byte is moved O(1) times amortised however small the frames.
  std::vector<uint8_t> buf_;
  size_t pos_ = 0;
  Status failure_;
};

// Appends the 4-byte length and the payload to out. payload.size() must fit in 32 bits.
void AppendFrame(std::vector<uint8_t>& out, std::span<const uint8_t> payload);

}  // namespace vsc::proto
