#include "relay/clip_codec.h"

#include <gtest/gtest.h>

#include <random>

#include "common/big_endian.h"
#include "unit/proto/doc_vectors.h"

namespace vsc::relay {
namespace {

Frame Sample(size_t payload_size, uint64_t salt) {
  Frame f;
  f.type = Type::kClip;
  f.code = static_cast<uint8_t>(salt);
  f.hops = static_cast<uint16_t>(salt * 7);
  f.request_id = 0x0102030405060708ULL + salt;
  f.version = 1700000000000ULL + salt;
  f.seq = salt * 1000;
  f.key = "group-" + std::to_string(salt);
  f.payload.resize(payload_size);
  for (size_t i = 0; i < payload_size; ++i) f.payload[i] = static_cast<uint8_t>(i * 31 + salt);
  return f;
}

// Feeds `bytes` in pieces of `step` and returns every frame decoded.
std::vector<Frame> DecodeAll(std::span<const uint8_t> bytes, size_t step) {
  FrameDecoder d;
  std::vector<Frame> out;
  for (size_t at = 0; at < bytes.size(); at += step) {
    d.Feed(bytes.subspan(at, std::min(step, bytes.size() - at)));
    for (;;) {
      auto next = d.Next();
      EXPECT_TRUE(next.ok()) << next.status().ToString();
      if (!next.ok() || !next->has_value()) break;
      out.push_back(std::move(**next));
    }
  }
  EXPECT_EQ(d.buffered(), 0u);
  return out;
}

TEST(ClipCodecTest, FramesOfEverySizeRoundTripAtEverySplit) {
  std::vector<Frame> frames;
  std::vector<uint8_t> stream;
  for (size_t size : {size_t{0}, size_t{1}, size_t{2}, size_t{100}, size_t{1024}, kMaxClip}) {
    frames.push_back(Sample(size, frames.size()));
    AppendFrame(stream, frames.back());
  }
  for (size_t step : {size_t{1}, size_t{2}, size_t{5}, size_t{10}, size_t{100}, stream.size()}) {
    EXPECT_EQ(DecodeAll(stream, step), frames) << "step " << step;
  }
}

TEST(ClipCodecTest, EverySplitPointOfOneFrameDecodesOnceWhole) {
  const std::vector<uint8_t> bytes = EncodeFrame(Sample(300, 3));
  for (size_t cut = 0; cut <= bytes.size(); ++cut) {
    FrameDecoder d;
    d.Feed(std::span(bytes).first(cut));
    auto first = d.Next();
    ASSERT_TRUE(first.ok());
    EXPECT_EQ(first->has_value(), cut == bytes.size()) << "cut " << cut;
    if (cut == bytes.size()) continue;
    d.Feed(std::span(bytes).subspan(cut));
    auto second = d.Next();
    ASSERT_TRUE(second.ok() && second->has_value()) << "cut " << cut;
    EXPECT_EQ(**second, Sample(300, 3));
  }
}

// docs/protocol.md "Clip relay", test vector clip-publish-g1.
TEST(ClipCodecTest, DocumentedTestVector) {
  Frame f;
  f.type = Type::kPublish;
  f.request_id = 7;
  f.version = 3;
  f.key = "g1";
  f.payload = TextPayload("hi");
  const std::vector<uint8_t> want = {
      0x00, 0x00, 0x00, 0x21,                          // length 33
      0x01, 0x00, 0x00, 0x00,                          // PUBLISH, code 0, hops 0
      0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x07,  // request id 7
      0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03,  // ring version 3
      0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  // seq 0
      0x02, 'g',  '1',  'h',  'i'};                    // key "g1", payload "hi"
  EXPECT_EQ(EncodeFrame(f), want);
  EXPECT_EQ(DecodeAll(want, want.size()), std::vector<Frame>{f});
  const auto doc = proto::testing::ProtocolDocVectors();
  ASSERT_EQ(doc.count("clip-publish-g1"), 1u);
  EXPECT_EQ(doc.at("clip-publish-g1"), want);
}

Status DecodeError(std::vector<uint8_t> bytes, size_t max_payload = kMaxNodePayload) {
  FrameDecoder d(max_payload);
  d.Feed(bytes);
  auto next = d.Next();
  if (next.ok()) return Internal(next->has_value() ? "decoded" : "needs more");
  // Final: asking again, even with more bytes, gives the same error.
  d.Feed(EncodeFrame(Sample(1, 1)));
  auto again = d.Next();
  EXPECT_FALSE(again.ok());
  if (!again.ok()) {
    EXPECT_EQ(again.status().message(), next.status().message());
  }
  return next.status();
}

TEST(ClipCodecTest, MalformedFramesAreRefusedWithTheReason) {
  std::vector<uint8_t> shorter;
  PutBigEndian(shorter, kFixedBytes - 1, 4);
  EXPECT_EQ(DecodeError(shorter).message(),
            "clip frame: length 28 is shorter than the 29 fixed bytes");

  std::vector<uint8_t> huge;  // refused from the 4 length bytes alone, nothing buffered
  PutBigEndian(huge, kFixedBytes + kMaxKey + kMaxNodePayload + 1, 4);
  EXPECT_NE(DecodeError(huge).message().find("is over the limit of"), std::string::npos);

  std::vector<uint8_t> big_payload = EncodeFrame(Sample(1000, 1));
  EXPECT_EQ(DecodeError(big_payload, 999).message(),
            "clip frame: payload of 1000 bytes is over the limit of 999");

  std::vector<uint8_t> unknown = EncodeFrame(Sample(4, 1));
  unknown[4] = 0x60;
  EXPECT_EQ(DecodeError(unknown).message(), "clip frame: unknown type 96");

  std::vector<uint8_t> long_key = EncodeFrame(Sample(0, 1));  // key "group-1": 7 bytes
  long_key[kLengthBytes + 28] = 8;
  EXPECT_EQ(DecodeError(long_key).message(),
            "clip frame: length 36 is shorter than its 8-byte key");
}

// A stream that failed stays failed: bytes fed after the error are never read as frames (the
// connection is closed once the refusal is written).
TEST(ClipCodecTest, AnErrorIsStickyWhateverFollows) {
  std::vector<uint8_t> bytes;
  PutBigEndian(bytes, kFixedBytes - 1, 4);
  FrameDecoder d;
  d.Feed(bytes);
  ASSERT_FALSE(d.Next().ok());
  d.Feed(EncodeFrame(Sample(10, 3)));
  for (int i = 0; i < 3; ++i) {
    auto next = d.Next();
    ASSERT_FALSE(next.ok());
    EXPECT_EQ(next.status().message(), "clip frame: length 28 is shorter than the 29 fixed bytes");
  }
}

TEST(ClipCodecTest, EveryTruncationWaitsAndEveryTypeByteIsCheckedOrKnown) {
  const std::vector<uint8_t> bytes = EncodeFrame(Sample(50, 2));
  for (size_t n = 0; n < bytes.size(); ++n) {
    FrameDecoder d;
    d.Feed(std::span(bytes).first(n));
    auto next = d.Next();
    ASSERT_TRUE(next.ok()) << n;
    EXPECT_FALSE(next->has_value()) << n;
  }
  for (int t = 0; t < 256; ++t) {
    std::vector<uint8_t> b = bytes;
    b[4] = static_cast<uint8_t>(t);
    FrameDecoder d;
    d.Feed(b);
    auto next = d.Next();
    EXPECT_EQ(next.ok(), IsKnownType(static_cast<uint8_t>(t))) << t;
  }
}

}  // namespace
}  // namespace vsc::relay
