#include "ring/table_codec.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "ring_test_util.h"
#include "unit/proto/doc_vectors.h"

namespace vsc::ring {
namespace {

using testing::RandomRing;
using testing::SeededRandom;
using Bytes = std::vector<uint8_t>;

// Feeds `bytes` in pieces of `chunk` (0: all at once) and returns the ring, or the error.
Result<Ring> DecodeInPieces(const Bytes& bytes, size_t chunk) {
  TableDecoder d;
  size_t off = 0;
  while (off < bytes.size()) {
    const size_t n = chunk == 0 ? bytes.size() : std::min(chunk, bytes.size() - off);
    VSC_ASSIGN_OR_RETURN(const size_t used, d.Feed({bytes.data() + off, n}));
    off += used;
    if (used < n) break;  // the table ended inside this piece
  }
  if (!d.done()) return InvalidArgument("incomplete, missing " + std::to_string(d.missing()));
  if (off != bytes.size()) return InvalidArgument("stopped early at " + std::to_string(off));
  return d.TakeRing();
}

// A decoder is canonical when everything it accepts re-encodes to the same bytes: a corrupted
// table is refused or visibly different.
void ExpectRefusedOrCanonical(const Bytes& b) {
  auto r = DecodeTable(b);
  if (r.ok()) {
    EXPECT_EQ(EncodeTable(*r), b);
  } else {
    EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
    EXPECT_EQ(r.status().message().rfind("ring table: ", 0), 0u) << r.status().message();
  }
}

Ring SmallRing() {
  auto r = Ring::Build(9, {NodeSpec{"rs1", {"127.0.0.1", 7001}}, NodeSpec{"rs2", {"::1", 7002}},
                           NodeSpec{"relay-3", {"node3.example", 443}}});
  EXPECT_TRUE(r.ok());
  return std::move(r).value();
}

TEST(TableCodecTest, RandomRingsRoundTrip) {
  Random rng = SeededRandom(601);
  for (size_t n : {0, 1, 2, 3, 10, 100, 1000}) {
    const Ring ring = RandomRing(rng, n, rng.Next());
    const Bytes b = EncodeTable(ring);
    EXPECT_EQ(b.size(), EncodedTableSize(ring));
    auto back = DecodeTable(b);
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    EXPECT_EQ(*back, ring);
  }
}

TEST(TableCodecTest, EverySplitDecodesTheSameRing) {
  Random rng = SeededRandom(602);
  const Ring ring = RandomRing(rng, 40, 77);
  const Bytes b = EncodeTable(ring);
  for (size_t chunk : {1, 2, 5, 10, 100, 0}) {
    SCOPED_TRACE("chunk " + std::to_string(chunk));
    auto got = DecodeInPieces(b, chunk);
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    EXPECT_EQ(*got, ring);
  }
  // Split at every single position into two pieces.
  for (size_t cut = 0; cut <= b.size(); ++cut) {
    TableDecoder d;
    ASSERT_EQ(*d.Feed({b.data(), cut}), cut);
    EXPECT_EQ(d.done(), cut == b.size());
    ASSERT_EQ(*d.Feed({b.data() + cut, b.size() - cut}), b.size() - cut);
    ASSERT_TRUE(d.done());
    EXPECT_EQ(d.TakeRing(), ring);
  }
}

TEST(TableCodecTest, DecoderStopsAtTheEndOfTheTable) {
  const Ring ring = SmallRing();
  Bytes stream = EncodeTable(ring);
  const size_t table = stream.size();
  stream.insert(stream.end(), {1, 2, 3});
  TableDecoder d;
  EXPECT_EQ(*d.Feed(stream), table);
  EXPECT_TRUE(d.done());
  EXPECT_EQ(*d.Feed(stream), 0u);  // a complete decoder takes nothing more
  EXPECT_EQ(d.TakeRing(), ring);
}

TEST(TableCodecTest, EveryTruncationNeedsMoreAndEveryExtensionIsRefused) {
  const Bytes b = EncodeTable(SmallRing());
  for (size_t len = 0; len < b.size(); ++len) {
    const Bytes cut(b.begin(), b.begin() + static_cast<std::ptrdiff_t>(len));
    TableDecoder d;
    ASSERT_TRUE(d.Feed(cut).ok());
    EXPECT_FALSE(d.done());
    EXPECT_GT(d.missing(), 0u);
    EXPECT_LE(d.missing(), b.size() - len);  // never asks for more than the table has left
    auto r = DecodeTable(cut);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().message().rfind("ring table: truncated after " + std::to_string(len), 0),
              0u)
        << r.status().message();
  }
  Bytes longer = b;
  longer.push_back(0);
  EXPECT_EQ(DecodeTable(longer).status().message(), "ring table: 1 trailing bytes after the table");
}

TEST(TableCodecTest, EveryBitFlipIsRefusedOrCanonical) {
  const Bytes b = EncodeTable(SmallRing());
  size_t accepted = 0;
  for (size_t i = 0; i < b.size(); ++i) {
    for (int bit = 0; bit < 8; ++bit) {
      Bytes c = b;
      c[i] ^= static_cast<uint8_t>(1 << bit);
      ExpectRefusedOrCanonical(c);
      accepted += DecodeTable(c).ok();
    }
  }
  // Only endpoint bytes (host, port) and the version can change without breaking a check.
  EXPECT_GT(accepted, 0u);
  EXPECT_LT(accepted, b.size() * 8 / 2);
}

TEST(TableCodecTest, RandomCorruptionOfALargeTableIsRefusedOrCanonical) {
  Random rng = SeededRandom(603);
  const Bytes b = EncodeTable(RandomRing(rng, 200, 5));
  for (int round = 0; round < 2000; ++round) {
    Bytes c = b;
    const size_t flips = 1 + rng.Uniform(4);
    for (size_t f = 0; f < flips; ++f) c[rng.Uniform(c.size())] = static_cast<uint8_t>(rng.Next());
    ExpectRefusedOrCanonical(c);
  }
}

// Byte offsets in the encoding of SmallRing's first member.
constexpr size_t kM0 = kTableHeaderSize;

std::string Refusal(Bytes b) {
  auto r = DecodeTable(b);
  EXPECT_FALSE(r.ok());
  return r.ok() ? std::string() : r.status().message();
}

TEST(TableCodecTest, EachStructuralProblemIsRefusedByName) {
  const Ring ring = SmallRing();
  const Bytes good = EncodeTable(ring);
  auto patched = [&](size_t at, std::initializer_list<uint8_t> bytes) {
    Bytes b = good;
    std::copy(bytes.begin(), bytes.end(), b.begin() + static_cast<std::ptrdiff_t>(at));
    return b;
  };
  EXPECT_EQ(Refusal(patched(1, {'L'})), "ring table: bad magic (expected 'VR')");
  EXPECT_EQ(Refusal(patched(2, {2})),
            "ring table: unsupported format 2 (this build reads format 1)");
  EXPECT_EQ(Refusal(patched(3, {1})), "ring table: reserved byte is 1, not 0");
  EXPECT_EQ(Refusal(patched(12, {0, 0, 0x40, 0x01})),
            "ring table: count 16385 exceeds the limit of 16384 members");
  EXPECT_EQ(Refusal(patched(kM0 + 8, {0})), "ring table: member 0: name_len 0 is not 1 to 64");
  EXPECT_EQ(Refusal(patched(kM0 + 8, {65})), "ring table: member 0: name_len 65 is not 1 to 64");
  EXPECT_EQ(Refusal(patched(kM0 + 9, {0})), "ring table: member 0: host_len 0 is not 1 to 253");
  EXPECT_EQ(Refusal(patched(kM0 + 9, {254})), "ring table: member 0: host_len 254 is not 1 to 253");
  EXPECT_EQ(Refusal(patched(kM0 + 10, {0, 0})), "ring table: member 0: port 0");

  // An id that is not the hash of the name (the last id byte lowered keeps the order).
  const Member& m0 = ring.member(0);
  Bytes wrong_id = good;
  wrong_id[kM0 + 7] ^= 1;
  EXPECT_EQ(Refusal(wrong_id), "ring table: member 0 \"" + m0.name + "\" has id " +
                                   IdHex(m0.id ^ 1) + " but its name hashes to " + IdHex(m0.id) +
                                   "; the table is corrupt or from a build with another id rule");

  // The first two members swapped: ids no longer ascend.
  const size_t len0 = kMemberHeaderSize + m0.name.size() + m0.endpoint.host.size();
  const Member& m1 = ring.member(1);
  const size_t len1 = kMemberHeaderSize + m1.name.size() + m1.endpoint.host.size();
  Bytes swapped(good.begin(), good.begin() + kM0);
  swapped.insert(swapped.end(), good.begin() + kM0 + len0, good.begin() + kM0 + len0 + len1);
  swapped.insert(swapped.end(), good.begin() + kM0, good.begin() + kM0 + len0);
  swapped.insert(swapped.end(), good.begin() + kM0 + len0 + len1, good.end());
  EXPECT_EQ(Refusal(swapped), "ring table: member 1: id " + IdHex(m0.id) + " does not follow " +
                                  IdHex(m1.id) + " (ids must be strictly ascending)");
}

TEST(TableCodecTest, AHugeCountIsRefusedFromTheHeaderAloneAndTheErrorStays) {
  Bytes header = EncodeTable(Ring());
  header[12] = header[13] = header[14] = header[15] = 0xff;
  TableDecoder d;
  auto first = d.Feed(header);
  ASSERT_FALSE(first.ok());
  EXPECT_EQ(first.status().message(),
            "ring table: count 4294967295 exceeds the limit of 16384 members");
  auto again = d.Feed(EncodeTable(SmallRing()));
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.status().message(), first.status().message());
  EXPECT_FALSE(d.done());
}

TEST(TableCodecTest, TheLargestTableIsWithinTheDocumentedLimit) {
  std::vector<NodeSpec> nodes;
  for (size_t i = 0; i < kMaxMembers; ++i) {
    std::string name = "n" + std::to_string(i);
    name.resize(kMaxNameLen, 'x');
    nodes.push_back(NodeSpec{name, Endpoint{std::string(kMaxHostLen, 'h'), 65535}});
  }
  auto ring = Ring::Build(1, std::move(nodes));
  ASSERT_TRUE(ring.ok()) << ring.status().ToString();
  const Bytes b = EncodeTable(*ring);
  EXPECT_EQ(b.size(), kMaxTableSize);
  auto back = DecodeTable(b);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->size(), kMaxMembers);
}

TEST(TableCodecTest, DocumentedVectorMatchesTheCodec) {
  const auto v = proto::testing::ProtocolDocVectors();
  ASSERT_EQ(v.count("ring-table-two-members"), 1u);
  auto ring =
      Ring::Build(7, {NodeSpec{"rs1", {"127.0.0.1", 7001}}, NodeSpec{"rs2", {"127.0.0.1", 7002}}});
  ASSERT_TRUE(ring.ok());
  EXPECT_EQ(EncodeTable(*ring), v.at("ring-table-two-members"));
  auto back = DecodeTable(v.at("ring-table-two-members"));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, *ring);
  EXPECT_EQ(back->member(0).name, "rs2");  // rs2's id is the smaller
}

}  // namespace
}  // namespace vsc::ring
