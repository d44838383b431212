#include "proto/frame.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/random.h"
#include "doc_vectors.h"

namespace vsc::proto {
namespace {

using Bytes = std::vector<uint8_t>;

Bytes Payload(Random& rng, size_t len) {
  Bytes p(len);
  for (auto& b : p) b = static_cast<uint8_t>(rng.Next());
  return p;
}

// Feeds stream in pieces of `chunk` bytes (0 = whole), draining after each piece.
Result<std::vector<Bytes>> DecodeAll(const Bytes& stream, size_t chunk, size_t max_frame) {
  FrameDecoder dec(max_frame);
  std::vector<Bytes> frames;
  const size_t step = chunk == 0 ? stream.size() : chunk;
  for (size_t off = 0; off < stream.size(); off += step) {
    const size_t n = std::min(step, stream.size() - off);
    dec.Feed({stream.data() + off, n});
    for (;;) {
      auto next = dec.Next();
      if (!next.ok()) return next.status();
      if (!next->has_value()) break;
      frames.push_back(std::move(**next));
    }
  }
  EXPECT_EQ(dec.buffered(), 0u);
  return frames;
}

TEST(FrameTest, AppendFrameLayoutMatchesProtocolDoc) {
  Bytes out;
  const std::string hello = "hello";
  AppendFrame(out, {reinterpret_cast<const uint8_t*>(hello.data()), hello.size()});
  EXPECT_EQ(out, (Bytes{0x00, 0x00, 0x00, 0x05, 'h', 'e', 'l', 'l', 'o'}));
  // Lengths above 16 bits use every header byte, most significant first.
  Bytes big(0x010203, 0xab);
  Bytes framed;
  AppendFrame(framed, big);
  ASSERT_EQ(framed.size(), big.size() + 4);
  EXPECT_EQ(framed[0], 0x00);
  EXPECT_EQ(framed[1], 0x01);
  EXPECT_EQ(framed[2], 0x02);
  EXPECT_EQ(framed[3], 0x03);
}

TEST(FrameTest, DocumentedVectorMatchesTheCode) {
  const auto vectors = testing::ProtocolDocVectors();
  ASSERT_EQ(vectors.count("frame-hello"), 1u);
  const Bytes& doc = vectors.at("frame-hello");
  Bytes framed;
  const std::string hello = "hello";
  AppendFrame(framed, {reinterpret_cast<const uint8_t*>(hello.data()), hello.size()});
  EXPECT_EQ(framed, doc);
  FrameDecoder dec;
  dec.Feed(doc);
  auto next = dec.Next();
  ASSERT_TRUE(next.ok());
  ASSERT_TRUE(next->has_value());
  EXPECT_EQ(std::string((*next)->begin(), (*next)->end()), hello);
}

TEST(FrameTest, AppendingManyFramesReallocatesLogarithmically) {
  Bytes out;
  const Bytes payload(3, 0x5a);
  int reallocations = 0;
  for (int i = 0; i < 100'000; ++i) {
    const size_t before = out.capacity();
    AppendFrame(out, payload);
    if (out.capacity() != before) ++reallocations;
  }
  EXPECT_EQ(out.size(), 100'000u * 7);
  EXPECT_LE(reallocations, 40);
}

TEST(FrameTest, ManyFramesSurviveEverySplit) {
  constexpr size_t kMax = 4096;
  Random rng(7);
  std::vector<Bytes> sent;
  Bytes stream;
  for (int i = 0; i < 600; ++i) {
    // Mostly tiny frames, some large ones, and the limit itself.
    size_t len = rng.Uniform(10) == 0 ? 1 + rng.Uniform(kMax) : 1 + rng.Uniform(12);
    if (i == 300) len = kMax;
    sent.push_back(Payload(rng, len));
    AppendFrame(stream, sent.back());
  }
  for (size_t chunk : {1, 2, 5, 10, 100, 0}) {
    SCOPED_TRACE("chunk " + std::to_string(chunk));
    auto got = DecodeAll(stream, chunk, kMax);
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    EXPECT_EQ(*got, sent);
  }
}

TEST(FrameTest, RandomChunkingDecodesTheSameFrames) {
  Random rng(11);
  for (int round = 0; round < 50; ++round) {
    std::vector<Bytes> sent;
    Bytes stream;
    const int count = 1 + static_cast<int>(rng.Uniform(40));
    for (int i = 0; i < count; ++i) {
      sent.push_back(Payload(rng, 1 + rng.Uniform(300)));
      AppendFrame(stream, sent.back());
    }
    FrameDecoder dec;
    std::vector<Bytes> got;
    size_t off = 0;
    while (off < stream.size()) {
      const size_t n = std::min<size_t>(1 + rng.Uniform(64), stream.size() - off);
      dec.Feed({stream.data() + off, n});
      off += n;
      for (;;) {
        auto next = dec.Next();
        ASSERT_TRUE(next.ok());
        if (!next->has_value()) break;
        got.push_back(std::move(**next));
      }
    }
    EXPECT_EQ(got, sent);
    EXPECT_EQ(dec.buffered(), 0u);
  }
}

TEST(FrameTest, IncompleteFrameNeedsMore) {
  Bytes stream;
  AppendFrame(stream, Bytes(10, 1));
  FrameDecoder dec;
  dec.Feed({stream.data(), stream.size() - 1});
  auto next = dec.Next();
  ASSERT_TRUE(next.ok());
  EXPECT_FALSE(next->has_value());
  EXPECT_EQ(dec.buffered(), stream.size() - 1);
  dec.Feed({stream.data() + stream.size() - 1, 1});
  next = dec.Next();
  ASSERT_TRUE(next.ok());
  ASSERT_TRUE(next->has_value());
  EXPECT_EQ(**next, Bytes(10, 1));
}

TEST(FrameTest, OversizeRefusedFromTheHeaderAloneAndStaysFailed) {
  FrameDecoder dec(100);
  Bytes ok_frame;
  AppendFrame(ok_frame, Bytes(100, 7));  // exactly the limit: fine
  dec.Feed(ok_frame);
  const Bytes header = {0x00, 0x00, 0x00, 101};
  dec.Feed(header);
  auto first = dec.Next();
  ASSERT_TRUE(first.ok());
  ASSERT_TRUE(first->has_value());
  EXPECT_EQ(**first, Bytes(100, 7));
  auto bad = dec.Next();
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), Code::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("101"), std::string::npos);
  EXPECT_TRUE(dec.failed());
  // Later input cannot revive the stream.
  dec.Feed(ok_frame);
  auto again = dec.Next();
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.status().code(), Code::kInvalidArgument);
}

TEST(FrameTest, HugeLengthRefusedWithDefaultLimit) {
  FrameDecoder dec;
  dec.Feed(Bytes{0xff, 0xff, 0xff, 0xff});
  EXPECT_FALSE(dec.Next().ok());
  FrameDecoder at_limit;
  Bytes header = {0x00, 0x10, 0x00, 0x00};  // 1 MiB: allowed, waits for the payload
  at_limit.Feed(header);
  auto next = at_limit.Next();
  ASSERT_TRUE(next.ok());
  EXPECT_FALSE(next->has_value());
  FrameDecoder over;
  header = {0x00, 0x10, 0x00, 0x01};
  over.Feed(header);
  EXPECT_FALSE(over.Next().ok());
}

TEST(FrameTest, ZeroLengthRefused) {
  FrameDecoder dec;
  dec.Feed(Bytes{0, 0, 0, 0, 0, 0, 0, 1, 9});
  auto next = dec.Next();
  ASSERT_FALSE(next.ok());
  EXPECT_EQ(next.status().code(), Code::kInvalidArgument);
  EXPECT_FALSE(dec.Next().ok());
}

TEST(FrameTest, FramesAfterPartialConsumptionKeepOrder) {
  // Interleave feeding and draining so the lazy compaction runs with live bytes behind pos.
  Random rng(3);
  FrameDecoder dec(1000);
  std::vector<Bytes> sent, got;
  for (int i = 0; i < 2000; ++i) {
    Bytes stream;
    for (int k = 0; k < 3; ++k) {
      sent.push_back(Payload(rng, 1 + rng.Uniform(20)));
      AppendFrame(stream, sent.back());
    }
    // Keep a tail back each time so a partial frame is always buffered.
    const size_t cut = rng.Uniform(stream.size());
    dec.Feed({stream.data(), cut});
    dec.Feed({stream.data() + cut, stream.size() - cut});
    auto next = dec.Next();
    ASSERT_TRUE(next.ok());
    if (next->has_value()) got.push_back(std::move(**next));
  }
  for (;;) {
    auto next = dec.Next();
    ASSERT_TRUE(next.ok());
    if (!next->has_value()) break;
    got.push_back(std::move(**next));
  }
  EXPECT_EQ(got, sent);
}

}  // namespace
}  // namespace vsc::proto
