// Fuzzes envelope opening under a fixed cluster key. Mode 0 (first byte even) opens the input as
// received from the network. Mode 1 (odd) wraps the input's body bytes in an envelope with a
// correct tag, so the protobuf body parser behind the tag check is reached too; whatever opens
// must seal again and reopen to the same sender, counter and message.
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <string>
#include <vector>

#include "proto/envelope.h"

namespace {

using vsc::proto::ClusterKey;
using vsc::proto::EnvelopeCodec;

const ClusterKey& FuzzKey() {
  static const ClusterKey key = [] {
    std::array<uint8_t, 32> b;
    for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<uint8_t>(i);
    return ClusterKey::FromBytes(b);
  }();
  return key;
}

// Input: u8 sender_len | sender | 8 counter bytes | body. Returns an authentic envelope.
std::vector<uint8_t> Authentic(std::span<const uint8_t> in) {
  if (in.empty()) return {};
  const size_t sender_len = 1 + in[0] % vsc::proto::kMaxSenderBytes;
  if (in.size() < 1 + sender_len + 8) return {};
  std::vector<uint8_t> out(vsc::proto::kEnvelopeMagic, vsc::proto::kEnvelopeMagic + 4);
  out.push_back(static_cast<uint8_t>(sender_len));
  out.insert(out.end(), in.begin() + 1, in.begin() + 1 + static_cast<ptrdiff_t>(sender_len) + 8);
  const auto body = in.subspan(1 + sender_len + 8);
  for (int i = 3; i >= 0; --i) out.push_back(static_cast<uint8_t>(body.size() >> (8 * i)));
  out.insert(out.end(), body.begin(), body.end());
  static vsc::proto::HmacSha256 mac(FuzzKey());
  const auto tag = mac.Compute(out);
  out.insert(out.end(), tag.begin(), tag.end());
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  static EnvelopeCodec codec(FuzzKey());
  const std::span<const uint8_t> rest(data + 1, size - 1);
  std::vector<uint8_t> envelope;
  if (data[0] & 1) {
    envelope = Authentic(rest);
    if (envelope.empty()) return 0;
  } else {
    envelope.assign(rest.begin(), rest.end());
  }
  auto opened = codec.Open(envelope);
  if (!opened.ok()) {
    // A correct tag can only fail on the body.
    if ((data[0] & 1) && opened.status().code() != vsc::Code::kDataLoss) std::abort();
    return 0;
  }
  auto resealed = codec.TrySeal(opened->sender, opened->counter, opened->message);
  if (!resealed.ok()) std::abort();
  auto reopened = codec.Open(*resealed);
  if (!reopened.ok() || reopened->sender != opened->sender ||
      reopened->counter != opened->counter ||
      reopened->message.SerializeAsString() != opened->message.SerializeAsString()) {
    std::abort();
  }
  return 0;
}
