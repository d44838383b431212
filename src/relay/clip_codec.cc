#include "relay/clip_codec.h"

#include <cstdlib>

#include "common/big_endian.h"

namespace vsc::relay {
namespace {

Status Refuse(const std::string& what) { return InvalidArgument("clip frame: " + what); }

}  // namespace

bool IsKnownType(uint8_t t) {
  return (t >= 1 && t <= 5) || (t >= 0x81 && t <= 0x87) || (t >= 0x41 && t <= 0x44);
}

bool IsTerminal(Type t) {
  switch (t) {
    case Type::kAck:
    case Type::kDone:
    case Type::kMoved:
    case Type::kRefused:
    case Type::kCopyAck:
    case Type::kTableReply:
    case Type::kOwnerReply:
      return true;
    default:
      return false;
  }
}

void AppendFrame(std::vector<uint8_t>& out, const Frame& f) {
  if (f.key.size() > kMaxKey) std::abort();  // callers bound keys (group names) first
  const size_t length = kFixedBytes + f.key.size() + f.payload.size();
  out.reserve(out.size() + kLengthBytes + length);
  PutBigEndian(out, length, 4);
  out.push_back(static_cast<uint8_t>(f.type));
  out.push_back(f.code);
  PutBigEndian(out, f.hops, 2);
  PutBigEndian(out, f.request_id, 8);
  PutBigEndian(out, f.version, 8);
  PutBigEndian(out, f.seq, 8);
  out.push_back(static_cast<uint8_t>(f.key.size()));
  out.insert(out.end(), f.key.begin(), f.key.end());
  out.insert(out.end(), f.payload.begin(), f.payload.end());
}

std::vector<uint8_t> EncodeFrame(const Frame& frame) {
  std::vector<uint8_t> out;
  AppendFrame(out, frame);
  return out;
}

std::string PayloadText(const Frame& frame) {
  return std::string(frame.payload.begin(), frame.payload.end());
}

std::vector<uint8_t> TextPayload(std::string_view text) {
  return std::vector<uint8_t>(text.begin(), text.end());
}

FrameDecoder::FrameDecoder(size_t max_payload) : max_payload_(max_payload) {}

void FrameDecoder::Feed(std::span<const uint8_t> bytes) {
  if (!failure_.ok()) return;
  if (pos_ > 0 && pos_ * 2 >= buf_.size()) {
    buf_.erase(buf_.begin(), buf_.begin() + static_cast<std::ptrdiff_t>(pos_));
    pos_ = 0;
  }
  buf_.insert(buf_.end(), bytes.begin(), bytes.end());
}

Status FrameDecoder::CheckLength(size_t length) const {
  if (length < kFixedBytes) {
    return Refuse("length " + std::to_string(length) + " is shorter than the " +
                  std::to_string(kFixedBytes) + " fixed bytes");
  }
  if (length > kFixedBytes + kMaxKey + max_payload_) {
    return Refuse("length " + std::to_string(length) + " is over the limit of " +
                  std::to_string(kFixedBytes + kMaxKey + max_payload_));
  }
  return Status::Ok();
}

Result<std::optional<Frame>> FrameDecoder::Next() {
  if (!failure_.ok()) return failure_;
  const size_t avail = buf_.size() - pos_;
  const uint8_t* p = buf_.data() + pos_;
  if (avail < kLengthBytes) return std::optional<Frame>();
  const size_t length = GetBigEndian(p, 4);
  if (Status s = CheckLength(length); !s.ok()) return failure_ = s;
  // The length alone says whether a frame can be too big or too short; the rest needs the
  // fixed fields.
  if (avail < kLengthBytes + kFixedBytes) return std::optional<Frame>();
  if (!IsKnownType(p[kLengthBytes])) {
    return failure_ = Refuse("unknown type " + std::to_string(p[kLengthBytes]));
  }
  const size_t key_len = p[kLengthBytes + 28];
  if (length < kFixedBytes + key_len) {
    return failure_ = Refuse("length " + std::to_string(length) + " is shorter than its " +
                             std::to_string(key_len) + "-byte key");
  }
  if (length - kFixedBytes - key_len > max_payload_) {
    return failure_ = Refuse("payload of " + std::to_string(length - kFixedBytes - key_len) +
                             " bytes is over the limit of " + std::to_string(max_payload_));
  }
  if (avail < kLengthBytes + length) return std::optional<Frame>();
  const uint8_t* q = p + kLengthBytes;
  Frame f;
  f.type = static_cast<Type>(q[0]);
  f.code = q[1];
  f.hops = static_cast<uint16_t>(GetBigEndian(q + 2, 2));
  f.request_id = GetBigEndian(q + 4, 8);
  f.version = GetBigEndian(q + 12, 8);
  f.seq = GetBigEndian(q + 20, 8);
  f.key.assign(reinterpret_cast<const char*>(q + kFixedBytes), key_len);
  f.payload.assign(q + kFixedBytes + key_len, q + length);
  pos_ += kLengthBytes + length;
  return std::optional<Frame>(std::move(f));
}

}  // namespace vsc::relay
