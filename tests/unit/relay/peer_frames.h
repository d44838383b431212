// Helpers of the peer tests (peer_auth_test, peer_link_test): a cluster key of one repeated
// byte and a small COPY frame.
#pragma once

#include <array>
#include <cstdint>

#include "proto/cluster_key.h"
#include "relay/clip_codec.h"

namespace vsc::relay::testing {

inline proto::ClusterKey Key(uint8_t fill) {
  std::array<uint8_t, proto::ClusterKey::kBytes> b;
  b.fill(fill);
  return proto::ClusterKey::FromBytes(b);
}

inline Frame Copy(uint64_t seq) {
  Frame f;
  f.type = Type::kCopy;
  f.key = "g";
  f.seq = seq;
  f.payload = TextPayload("clip");
  return f;
}

}  // namespace vsc::relay::testing
