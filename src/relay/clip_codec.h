// The clip relay's frames (docs/protocol.md "Clip relay"): every message between a client, a
// ring node and the director's ring port, and between two ring nodes, is one frame:
//
//   u32 length L (bytes after this field) | u8 type | u8 code | u16 hops | u64 request id
//   | u64 ring version | u64 seq | u8 key length K | K key bytes | L - 29 - K payload bytes
//
// all integers big endian. What key, seq, code and payload mean depends on the type (the table
// in docs/protocol.md). FrameDecoder is sans-I/O and incremental: Feed() what arrived, in
// pieces of any size, then Next() until it returns nullopt; a frame over the decoder's payload
// bound is refused from its header, before any of it is buffered. Errors are final and start
// with "clip frame: "; the stream cannot be resynchronised, so the caller closes it. Encoding
// is pure. Not thread safe; one decoder per connection.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "common/status.h"

namespace vsc::relay {

enum class Type : uint8_t {
  // Client -> node (or the director's ring port).
  kPublish = 1,    // key group, payload clip; answered ACK (seq, hops) once stored and copied
  kSubscribe = 2,  // key group, seq = last seq seen (0: none); CLIP frames follow, forever
  kFetch = 3,      // key group, seq = since; CLIP frames with seq > since, then DONE
  kTable = 4,      // answered TABLE (payload = the ring route table)
  kOwner = 5,      // key = any key; answered OWNER (key = owner name, payload "host:port")
  // Node -> client.
  kAck = 0x81,      // seq = the clip's group seq, hops = forwards taken, version = node's ring
  kClip = 0x82,     // key group, seq, payload clip; request id = the subscribe/fetch request's
  kDone = 0x83,     // end of a fetch: seq = the group's last seq
  kMoved = 0x84,    // key = owner name, payload "host:port", version = the node's ring version
  kRefused = 0x85,  // code = Refusal, payload = why, for a person
  kTableReply = 0x86,
  kOwnerReply = 0x87,
  // Node <-> node, on an authenticated peer connection (peer_auth.h).
  kPeerHello = 0x41,      // key = sender name, payload = 16-byte nonce
  kPeerChallenge = 0x42,  // payload = 16-byte nonce: the session's, sealed into every frame
  kCopy = 0x43,           // key group, seq, payload clip: store this copy
  kCopyAck = 0x44,        // seq = the copy's seq
};

enum class Refusal : uint8_t {
  kNone = 0,
  kMalformed = 1,    // not a request this node understands
  kTooLarge = 2,     // clip over kMaxClip
  kSubscribers = 3,  // the group has its maximum of subscribers
  kGroups = 4,       // the node holds its maximum of groups
  kRate = 5,         // the connection sends requests faster than allowed
  kUnavailable = 6,  // no ring yet, or the owner and its successors cannot be reached
  kConnections = 7,  // the node serves its maximum of connections
  kGone = 8,         // fetch: clips after `since` were dropped from the bounded buffer
  kUnauthenticated = 9,
};

// FETCH with this code, between peers: the handoff of an arc (payload: u64 start, u64 end),
// answered with every clip the node holds of groups in (start, end], then DONE.
inline constexpr uint8_t kHandoffCode = 1;

inline constexpr size_t kLengthBytes = 4;
inline constexpr size_t kFixedBytes = 29;  // type .. key length
inline constexpr size_t kMaxKey = 255;
inline constexpr size_t kMaxClip = 64 * 1024;
// A node's bound for one frame's payload: a clip plus a peer frame's 32-byte tag.
inline constexpr size_t kMaxNodePayload = kMaxClip + 64;

struct Frame {
  Type type = Type::kPublish;
  uint8_t code = 0;
  uint16_t hops = 0;
  uint64_t request_id = 0;
  uint64_t version = 0;
  uint64_t seq = 0;
  std::string key;
  std::vector<uint8_t> payload;
  bool operator==(const Frame&) const = default;
};

// Appends one frame. key.size() must be <= kMaxKey (a caller bug otherwise: aborts).
void AppendFrame(std::vector<uint8_t>& out, const Frame& frame);
std::vector<uint8_t> EncodeFrame(const Frame& frame);
// The payload as text (reasons, "host:port").
std::string PayloadText(const Frame& frame);
std::vector<uint8_t> TextPayload(std::string_view text);

class FrameDecoder {
 public:
  explicit FrameDecoder(size_t max_payload = kMaxNodePayload);

  void Feed(std::span<const uint8_t> bytes);
  // The next whole frame, nullopt when more bytes are needed, or the final error: a length
  // shorter than the fixed fields or the key, a payload over the bound, an unknown type.
  Result<std::optional<Frame>> Next();
  size_t buffered() const { return buf_.size() - pos_; }

 private:
  Status CheckLength(size_t length) const;

  size_t max_payload_;
  std::vector<uint8_t> buf_;  // unconsumed bytes are buf_[pos_..]
  size_t pos_ = 0;
  Status failure_;
};

// True for the frame types that end an answer (ACK, DONE, MOVED, REFUSED, COPY_ACK, TABLE,
// OWNER); CLIP frames of a fetch come before its DONE.
bool IsTerminal(Type type);
// True for the values of Type.
bool IsKnownType(uint8_t type);

}  // namespace vsc::relay
