#include "relay/peer_auth.h"

#include <algorithm>

#include "common/big_endian.h"

namespace vsc::relay {
namespace {

// nonce || number || the frame encoded as it is now (without its tag), into `out`.
void Cover(std::vector<uint8_t>& out, const proto::Nonce& nonce, uint64_t number,
           const Frame& frame) {
  out.assign(nonce.begin(), nonce.end());
  PutBigEndian(out, number, 8);
  AppendFrame(out, frame);
}

constexpr size_t kCoverPrefix = proto::kNonceBytes + 8;

}  // namespace

PeerSealer::PeerSealer(const proto::ClusterKey& key, const proto::Nonce& nonce)
    : hmac_(key), nonce_(nonce) {}

std::span<const uint8_t> PeerSealer::Encode(const Frame& frame) {
  Cover(buf_, nonce_, number_++, frame);
  const proto::HmacSha256::Tag tag = hmac_.Compute(buf_);
  buf_.insert(buf_.end(), tag.begin(), tag.end());
  // On the wire the frame's length counts its tag too.
  const uint64_t length = buf_.size() - kCoverPrefix - kLengthBytes;
  for (size_t i = 0; i < kLengthBytes; ++i) {
    buf_[kCoverPrefix + i] = static_cast<uint8_t>(length >> (8 * (kLengthBytes - 1 - i)));
  }
  return std::span<const uint8_t>(buf_).subspan(kCoverPrefix);
}

void PeerSealer::Seal(Frame& frame) {
  const std::span<const uint8_t> wire = Encode(frame);
  frame.payload.insert(frame.payload.end(), wire.end() - kTagBytes, wire.end());
}

PeerOpener::PeerOpener(const proto::ClusterKey& key, const proto::Nonce& nonce)
    : hmac_(key), nonce_(nonce) {}

Status PeerOpener::Open(Frame& frame) {
  if (frame.payload.size() < kTagBytes) {
    return Unauthenticated("peer frame without its 32-byte tag");
  }
  std::array<uint8_t, kTagBytes> tag;
  std::copy(frame.payload.end() - kTagBytes, frame.payload.end(), tag.begin());
  frame.payload.resize(frame.payload.size() - kTagBytes);
  Cover(buf_, nonce_, number_++, frame);
  if (!hmac_.Verify(buf_, tag)) {
    return Unauthenticated(
        "peer frame does not verify (wrong cluster key, or a replayed or altered frame)");
  }
  return Status::Ok();
}

Result<proto::Nonce> NonceOf(const Frame& frame) {
  if (frame.payload.size() != proto::kNonceBytes) {
    return InvalidArgument("peer handshake: payload is " + std::to_string(frame.payload.size()) +
                           " bytes, not a 16-byte nonce");
  }
  proto::Nonce n;
  std::copy(frame.payload.begin(), frame.payload.end(), n.begin());
  return n;
}

}  // namespace vsc::relay
