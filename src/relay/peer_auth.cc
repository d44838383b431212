#include "relay/peer_auth.h"

#include <algorithm>

#include "common/big_endian.h"

namespace vsc::relay {
namespace {

// nonce || number || the frame encoded as it is now (without its tag).
std::vector<uint8_t> Covered(const proto::Nonce& nonce, uint64_t number, const Frame& frame) {
  std::vector<uint8_t> data(nonce.begin(), nonce.end());
  PutBigEndian(data, number, 8);
  AppendFrame(data, frame);
  return data;
}

}  // namespace

PeerSealer::PeerSealer(const proto::ClusterKey& key, const proto::Nonce& nonce)
    : hmac_(key), nonce_(nonce) {}

void PeerSealer::Seal(Frame& frame) {
  const proto::HmacSha256::Tag tag = hmac_.Compute(Covered(nonce_, number_++, frame));
  frame.payload.insert(frame.payload.end(), tag.begin(), tag.end());
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
  if (!hmac_.Verify(Covered(nonce_, number_++, frame), tag)) {
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
