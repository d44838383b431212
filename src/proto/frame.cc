#include "proto/frame.h"

#include <algorithm>
#include <cstdlib>
#include <string>

namespace vsc::proto {

FrameDecoder::FrameDecoder(size_t max_frame) : max_frame_(max_frame) {}

void FrameDecoder::Feed(std::span<const uint8_t> bytes) {
  if (failed() || bytes.empty()) return;
  if (pos_ > 0 && pos_ * 2 >= buf_.size()) {
    buf_.erase(buf_.begin(), buf_.begin() + static_cast<ptrdiff_t>(pos_));
    pos_ = 0;
  }
  buf_.insert(buf_.end(), bytes.begin(), bytes.end());
}

Result<std::optional<std::vector<uint8_t>>> FrameDecoder::Next() {
  if (failed()) return failure_;
  const size_t avail = buf_.size() - pos_;
  if (avail < kFrameHeaderBytes) return std::optional<std::vector<uint8_t>>();
  const uint8_t* p = buf_.data() + pos_;
  const uint32_t len = (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) |
                       uint32_t{p[3]};
  if (len == 0) {
    failure_ = InvalidArgument(
        "frame refused: zero-length frame; the peer is not speaking the vsc control protocol");
    return failure_;
  }
  if (len > max_frame_) {
    failure_ = InvalidArgument("frame refused: length " + std::to_string(len) +
                               " exceeds the limit of " + std::to_string(max_frame_) +
                               " bytes; the peer sent an oversized message or is not speaking "
                               "the vsc control protocol");
    return failure_;
  }
  if (avail - kFrameHeaderBytes < len) return std::optional<std::vector<uint8_t>>();
  const uint8_t* body = p + kFrameHeaderBytes;
  std::vector<uint8_t> payload(body, body + len);
  pos_ += kFrameHeaderBytes + len;
  if (pos_ == buf_.size()) {
    buf_.clear();
    pos_ = 0;
  }
  return std::optional<std::vector<uint8_t>>(std::move(payload));
}

void AppendFrame(std::vector<uint8_t>& out, std::span<const uint8_t> payload) {
  if (payload.size() > UINT32_MAX) std::abort();  // a caller bug: no limit allows this
  const auto len = static_cast<uint32_t>(payload.size());
  // Grow geometrically: reserving the exact size on every call would reallocate each time and
  // make appending many frames to one buffer quadratic.
  const size_t needed = out.size() + kFrameHeaderBytes + payload.size();
  if (needed > out.capacity()) out.reserve(std::max(needed, 2 * out.capacity()));
  out.push_back(static_cast<uint8_t>(len >> 24));
  out.push_back(static_cast<uint8_t>(len >> 16));
  out.push_back(static_cast<uint8_t>(len >> 8));
  out.push_back(static_cast<uint8_t>(len));
  out.insert(out.end(), payload.begin(), payload.end());
}

}  // namespace vsc::proto
