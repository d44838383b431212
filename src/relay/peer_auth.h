// Authentication of node-to-node relay traffic (forwards and copies, docs/protocol.md "Clip
// relay", "Peer connections"), under the cluster key.
//
// A node that connects to another sends PEER_HELLO (key = its name, payload = its nonce Nc)
// in the clear; the acceptor answers PEER_CHALLENGE with its own nonce Ns. From then on every
// frame in either direction, the challenge included, ends with a 32-byte tag:
//   HMAC-SHA256(cluster key, nonce || u64 frame number || the frame encoded without its tag)
// where the acceptor's frames use Nc and the connector's use Ns (each side's tags are fresh to
// the side that checks them), and frame numbers count from 0 per direction. A replayed,
// reordered, dropped or altered frame, or one from another connection, fails the check.
//
// Not thread safe: one PeerSealer and one PeerOpener per connection, on its worker.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "common/status.h"
#include "proto/auth.h"
#include "proto/session_frames.h"
#include "relay/clip_codec.h"

namespace vsc::relay {

inline constexpr size_t kTagBytes = proto::HmacSha256::kTagBytes;

class PeerSealer {
 public:
  PeerSealer(const proto::ClusterKey& key, const proto::Nonce& nonce);
  // The next frame on the wire: encoded with its tag (EncodeFrame of the sealed frame), in this
  // sealer's buffer, valid until the next call. The frame's bytes are copied once and, once
  // the buffer has grown, nothing is allocated (every node-to-node frame goes this way).
  std::span<const uint8_t> Encode(const Frame& frame);
  // Appends the tag to frame.payload (the same tag Encode would send).
  void Seal(Frame& frame);

 private:
  proto::HmacSha256 hmac_;
  proto::Nonce nonce_;
  uint64_t number_ = 0;
  std::vector<uint8_t> buf_;  // nonce || number || the frame || its tag
};

class PeerOpener {
 public:
  PeerOpener(const proto::ClusterKey& key, const proto::Nonce& nonce);
  // Checks and strips the tag. Unauthenticated when it does not verify (and from then on the
  // connection is useless: the caller closes it).
  Status Open(Frame& frame);

 private:
  proto::HmacSha256 hmac_;
  proto::Nonce nonce_;
  uint64_t number_ = 0;
  std::vector<uint8_t> buf_;  // what the tag covers, reused from frame to frame
};

// The nonce in a PEER_HELLO or PEER_CHALLENGE payload (tag already stripped).
Result<proto::Nonce> NonceOf(const Frame& frame);

}  // namespace vsc::relay
