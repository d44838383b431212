#include "proto/envelope.h"

#include <google/protobuf/stubs/logging.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <utility>

namespace vsc::proto {
namespace {

void PutBigEndian(uint8_t* p, uint64_t v, int bytes) {
  for (int i = bytes - 1; i >= 0; --i) {
    p[i] = static_cast<uint8_t>(v);
    v >>= 8;
  }
}

uint64_t GetBigEndian(const uint8_t* p, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v = (v << 8) | p[i];
  return v;
}

}  // namespace

EnvelopeCodec::EnvelopeCodec(const ClusterKey& key) : hmac_(key) {}

// Checks the sender and the body's length, then lays out the envelope around a body of
// `body_len` bytes; `write_body` fills them; the tag ends it.
template <typename WriteBody>
Result<std::vector<uint8_t>> EnvelopeCodec::SealWith(std::string_view sender, uint64_t counter,
                                                     size_t body_len, WriteBody write_body) {
  if (sender.empty() || sender.size() > kMaxSenderBytes) {
    return InvalidArgument("cannot seal: sender id must be 1 to " +
                           std::to_string(kMaxSenderBytes) + " bytes, got " +
                           std::to_string(sender.size()));
  }
  if (body_len > kMaxBodyBytes) {
    return InvalidArgument("cannot seal: message body is " + std::to_string(body_len) +
                           " bytes, over the limit of " + std::to_string(kMaxBodyBytes));
  }
  std::vector<uint8_t> out(kEnvelopeFixedBytes + sender.size() + body_len);
  uint8_t* p = out.data();
  std::memcpy(p, kEnvelopeMagic, sizeof(kEnvelopeMagic));
  p += sizeof(kEnvelopeMagic);
  *p++ = static_cast<uint8_t>(sender.size());
  std::memcpy(p, sender.data(), sender.size());
  p += sender.size();
  PutBigEndian(p, counter, 8);
  p += 8;
  PutBigEndian(p, body_len, 4);
  p += 4;
  write_body(p);
  p += body_len;
  const size_t signed_len = static_cast<size_t>(p - out.data());
  const HmacSha256::Tag tag = hmac_.Compute({out.data(), signed_len});
  std::memcpy(p, tag.data(), tag.size());
  return out;
}

Result<std::vector<uint8_t>> EnvelopeCodec::TrySeal(std::string_view sender, uint64_t counter,
                                                    const Message& message) {
  // ByteSizeLong() caches the sizes the serialisation relies on.
  return SealWith(sender, counter, message.ByteSizeLong(),
                  [&](uint8_t* body) { message.SerializeWithCachedSizesToArray(body); });
}

Result<std::vector<uint8_t>> EnvelopeCodec::TrySealEncoded(std::string_view sender,
                                                           uint64_t counter,
                                                           std::string_view message) {
  return SealWith(sender, counter, message.size(), [&](uint8_t* body) {
    if (!message.empty()) std::memcpy(body, message.data(), message.size());
  });
}

std::vector<uint8_t> EnvelopeCodec::Seal(std::string_view sender, uint64_t counter,
                                         const Message& message) {
  Result<std::vector<uint8_t>> sealed = TrySeal(sender, counter, message);
  if (!sealed.ok()) {
    std::fprintf(stderr, "vsc: %s\n", sealed.status().ToString().c_str());
    std::abort();
  }
  return std::move(sealed).value();
}

Result<Opened> EnvelopeCodec::Open(std::span<const uint8_t> in) {
  const size_t n = in.size();
  if (n < kEnvelopeFixedBytes) {
    return InvalidArgument("not a vsc envelope: " + std::to_string(n) +
                           " bytes is shorter than the smallest envelope");
  }
  if (std::memcmp(in.data(), kEnvelopeMagic, sizeof(kEnvelopeMagic)) != 0) {
    return InvalidArgument("not a vsc envelope: magic is not \"VSE1\"");
  }
  const size_t sender_len = in[4];
  if (sender_len == 0 || sender_len > kMaxSenderBytes) {
    return InvalidArgument("not a vsc envelope: sender length " + std::to_string(sender_len) +
                           " is outside 1.." + std::to_string(kMaxSenderBytes));
  }
  if (n < kEnvelopeFixedBytes + sender_len) {
    return InvalidArgument("not a vsc envelope: truncated at " + std::to_string(n) + " bytes");
  }
  const uint8_t* sender = in.data() + 5;
  const uint64_t counter = GetBigEndian(sender + sender_len, 8);
  const size_t body_len = GetBigEndian(sender + sender_len + 8, 4);
  if (body_len > kMaxBodyBytes) {
    return InvalidArgument("not a vsc envelope: body length " + std::to_string(body_len) +
                           " is over the limit of " + std::to_string(kMaxBodyBytes));
  }
  const size_t expected = kEnvelopeFixedBytes + sender_len + body_len;
  if (n != expected) {
    return InvalidArgument("not a vsc envelope: " + std::to_string(n) +
                           " bytes where the lengths inside announce " + std::to_string(expected));
  }
  const size_t signed_len = n - HmacSha256::kTagBytes;
  if (!hmac_.Verify(in.first(signed_len), in.subspan(signed_len).first<HmacSha256::kTagBytes>())) {
    return Unauthenticated(
        "envelope refused: HMAC tag does not match; the sender uses a different cluster key or "
        "the message was altered");
  }
  Opened opened;
  opened.sender.assign(reinterpret_cast<const char*>(sender), sender_len);
  opened.counter = counter;
  const uint8_t* body = sender + sender_len + 12;
  bool parsed;
  {
    // The failure is reported in the Status; keep protobuf from also writing to stderr (it does
    // so for non-UTF-8 text in string fields), which would bypass our logging.
    google::protobuf::LogSilencer silence;
    parsed = opened.message.ParseFromArray(body, static_cast<int>(body_len));
  }
  if (!parsed) {
    return DataLoss("envelope from " + opened.sender +
                    " is authenticated but its body is not a control message (malformed "
                    "protobuf or non-UTF-8 text); the sender runs an incompatible vsc version");
  }
  return opened;
}

std::vector<uint8_t> Seal(const ClusterKey& key, std::string_view sender, uint64_t counter,
                          const Message& message) {
  return EnvelopeCodec(key).Seal(sender, counter, message);
}

Result<Opened> Open(const ClusterKey& key, std::span<const uint8_t> envelope) {
  return EnvelopeCodec(key).Open(envelope);
}

}  // namespace vsc::proto
