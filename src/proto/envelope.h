// The authenticated envelope every control, heartbeat (and later replication) message travels
// in (DESIGN.md §9, §12; byte layout and a test vector in docs/protocol.md):
//
//   "VSE1" | u8 sender_len | sender | u64 counter (BE) | u32 body_len (BE) | body | tag[32]
//
// body is a serialized proto::Message; tag = HMAC-SHA256(cluster key, every byte before it).
// One envelope per UDP datagram, or one per frame (frame.h) on a TCP session.
//
// Open() authenticates; it does not detect replays. The receiver then passes (sender, counter)
// to its ReplayGuard (auth.h) and drops the message unless that accepts it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "proto/auth.h"
#include "proto/cluster_key.h"
#include "proto/control.pb.h"

namespace vsc::proto {

inline constexpr char kEnvelopeMagic[4] = {'V', 'S', 'E', '1'};
inline constexpr size_t kMaxSenderBytes = 64;
// 8 MiB: room for one write of kMaxWritePayload (4 MiB, director/replicator.h) in a Replicate
// message, and for one result row of that size in a sql-tcp page (docs/protocol.md).
inline constexpr size_t kMaxBodyBytes = size_t{8} << 20;
// magic + sender_len + counter + body_len + tag.
inline constexpr size_t kEnvelopeFixedBytes = 4 + 1 + 8 + 4 + HmacSha256::kTagBytes;
inline constexpr size_t kMaxEnvelopeBytes = kEnvelopeFixedBytes + kMaxSenderBytes + kMaxBodyBytes;

struct Opened {
  std::string sender;
  uint64_t counter = 0;
  // May have no body set: an authenticated message from a newer peer whose body this build does
  // not know parses with the body as unknown fields. Callers ignore such messages.
  Message message;
};

// Seals and opens under one key, reusing one HMAC context. Not thread safe: one per thread or
// per session. The key is copied into the OpenSSL context; the ClusterKey need not outlive it.
class EnvelopeCodec {
 public:
  explicit EnvelopeCodec(const ClusterKey& key);

  // Requires 1 <= sender.size() <= kMaxSenderBytes and message.ByteSizeLong() <= kMaxBodyBytes;
  // breaking that is a caller bug and aborts. Use TrySeal when the message size is not bounded
  // by construction.
  std::vector<uint8_t> Seal(std::string_view sender, uint64_t counter, const Message& message);

  // As Seal, but an empty or oversized sender or body is InvalidArgument.
  Result<std::vector<uint8_t>> TrySeal(std::string_view sender, uint64_t counter,
                                       const Message& message);
  // As TrySeal, for a message already serialized (`message` holds a proto::Message's bytes,
  // e.g. director/stream_entry.h's EncodeReplicate): the same envelope, without re-encoding.
  Result<std::vector<uint8_t>> TrySealEncoded(std::string_view sender, uint64_t counter,
                                              std::string_view message);

  // Errors, checked in this order:
  //  - InvalidArgument: not an envelope (wrong magic, sender length 0 or over 64, body over
  //    8 MiB, total length not matching the lengths inside). Nothing is authenticated yet, so the
  //    message names no sender.
  //  - Unauthenticated: the tag does not match (wrong key or altered bytes).
  //  - DataLoss: the tag matches but the body is not a Message: the sender holds the key but
  //    speaks an incompatible protocol version, or has a bug.
  Result<Opened> Open(std::span<const uint8_t> envelope);

 private:
  template <typename WriteBody>
  Result<std::vector<uint8_t>> SealWith(std::string_view sender, uint64_t counter, size_t body_len,
                                        WriteBody write_body);
  HmacSha256 hmac_;
};

// One-shot forms; each keys a fresh HMAC context, so prefer EnvelopeCodec on hot paths.
std::vector<uint8_t> Seal(const ClusterKey& key, std::string_view sender, uint64_t counter,
                          const Message& message);
Result<Opened> Open(const ClusterKey& key, std::span<const uint8_t> envelope);

}  // namespace vsc::proto
