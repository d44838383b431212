// Vectors taken from the seeds and from LVS: exact sequences, hashes and weights.
#include <gtest/gtest.h>

#include "sched/dwlc.h"
#include "sched/sh.h"
#include "sched_test_util.h"

namespace vsc::sched {
namespace {

using testing::Letters;
using testing::MakeOrDie;
using testing::WithWeights;

TEST(SeedVectors, WrrWeights432GiveAABABCABC) {
  auto s = MakeOrDie("wrr");
  auto b = WithWeights({4, 3, 2});
  s->Rebuild(b);
  EXPECT_EQ(Letters(*s, b, 27), "AABABCABCAABABCABCAABABCABC");
}

TEST(SeedVectors, WrrIsBurstyAsInLvs) {
  auto s = MakeOrDie("wrr");
  auto b = WithWeights({5, 1, 1});
  s->Rebuild(b);
  EXPECT_EQ(Letters(*s, b, 14), "AAAAABCAAAAABC");
}

TEST(SeedVectors, WrrCommonGcdSpeedsTheCycle) {
  auto s = MakeOrDie("wrr");
  auto b = WithWeights({4, 2});
  s->Rebuild(b);
  EXPECT_EQ(Letters(*s, b, 6), "AABAAB");
}

TEST(SeedVectors, WrrSkipsUnavailableAndQuiesced) {
  auto s = MakeOrDie("wrr");
  auto b = WithWeights({4, 3, 2});
  s->Rebuild(b);
  b[1].available = false;
  // cw 4: A; cw 3: A; cw 2: A C; cw 1: A C; then cw 4 again.
  EXPECT_EQ(Letters(*s, b, 9), "AAACACAAA");
  b[1].available = true;
  b[0].weight = 0;  // quiesced without a rebuild: still never picked
  for (char c : Letters(*s, b, 50)) EXPECT_NE(c, 'A');
}

TEST(SeedVectors, RrVisitsInOrderFromTheFirstServer) {
  auto s = MakeOrDie("rr");
  auto b = WithWeights({1, 5, 1});
  s->Rebuild(b);
  EXPECT_EQ(Letters(*s, b, 7), "ABCABCA");
  b[1].weight = 0;
  EXPECT_EQ(Letters(*s, b, 4), "CACA");
}

TEST(SeedVectors, ShHashIsKnuthMultiplicativeOnHostOrderAddress) {
  EXPECT_EQ(ShBucket(0xC0A80101u), 177u);  // 192.168.1.1, also lvs_anchors.md (old kernels)
  EXPECT_EQ(ShBucket(0x0A000001u), 177u);  // 10.0.0.1: only the low byte matters
  EXPECT_EQ(ShBucket(0x0A000002u), 98u);
  EXPECT_EQ(ShBucket(0xAC10054Du), 61u);   // 172.16.5.77
  EXPECT_EQ(ShBucket(0u), 0u);
  EXPECT_EQ(ShBucket(0xFFFFFFFFu), 79u);
}

TEST(SeedVectors, ShTilesBucketsByWeightAsLvs) {
  SourceHashScheduler s;
  auto b = WithWeights({1, 2, 0});  // lvs_anchors.md: ABBC repeated, 64/128/64 buckets
  s.Rebuild(b);
  int counts[3] = {0, 0, 0};
  for (uint32_t i = 0; i < kShBuckets; ++i) {
    const uint32_t expected[4] = {0, 1, 1, 2};
    ASSERT_EQ(s.buckets()[i], expected[i % 4]) << "bucket " << i;
    ++counts[s.buckets()[i]];
  }
  EXPECT_EQ(counts[0], 64);
  EXPECT_EQ(counts[1], 128);
  EXPECT_EQ(counts[2], 64);
}

TEST(SeedVectors, ShWeightsAreReducedByTheirGcd) {
  SourceHashScheduler s;
  s.Rebuild(WithWeights({100, 200}));  // same tiling as 1:2
  for (uint32_t i = 0; i < kShBuckets; ++i) {
    ASSERT_EQ(s.buckets()[i], (i % 3 == 0) ? 0u : 1u) << "bucket " << i;
  }
}

TEST(SeedVectors, ShPicksTheBucketsServer) {
  auto s = MakeOrDie("sh");
  auto b = WithWeights({1, 1, 1, 1});
  s->Rebuild(b);
  // bucket 177 -> 177 % 4 = 1, bucket 98 -> 2, bucket 61 -> 1, bucket 0 -> 0.
  EXPECT_EQ(s->Pick(b, Flow{0xC0A80101u, 0}), 1u);
  EXPECT_EQ(s->Pick(b, Flow{0x0A000002u, 0}), 2u);
  EXPECT_EQ(s->Pick(b, Flow{0xAC10054Du, 0}), 1u);
  EXPECT_EQ(s->Pick(b, Flow{0u, 0}), 0u);
}

TEST(SeedVectors, ShFallbackFollowsLvsShFallbackProbeOrder) {
  auto s = MakeOrDie("sh");
  auto b = WithWeights({1, 1, 1, 1});
  s->Rebuild(b);
  b[1].available = false;
  // 192.168.1.1: hash 177 (server 1, out). Offsets probe (177 + (177 + o)) & 255 = 98 + o:
  // bucket 98 belongs to server 2.
  EXPECT_EQ(s->Pick(b, Flow{0xC0A80101u, 0}), 2u);
  b[2].available = false;  // bucket 99 -> server 3
  EXPECT_EQ(s->Pick(b, Flow{0xC0A80101u, 0}), 3u);
}

TEST(SeedVectors, DwlcWeightIs700MinusResponseTime) {
  EXPECT_DOUBLE_EQ(DynamicWeight(0, 700), 700);
  EXPECT_DOUBLE_EQ(DynamicWeight(100, 700), 600);
  EXPECT_DOUBLE_EQ(DynamicWeight(699, 700), 1);
  EXPECT_DOUBLE_EQ(DynamicWeight(700, 700), 0);
  EXPECT_DOUBLE_EQ(DynamicWeight(1000, 700), 0);
  EXPECT_DOUBLE_EQ(DynamicWeight(1e300 * 1e300, 700), 0);  // infinity

  Backend b;
  b.weight = 3;
  b.response_ms = 0;  // not measured yet: the configured weight
  EXPECT_DOUBLE_EQ(DwlcWeight(b, 700), 3);
  b.response_ms = 100;
  EXPECT_DOUBLE_EQ(DwlcWeight(b, 700), 600);
  b.response_ms = 699;
  EXPECT_DOUBLE_EQ(DwlcWeight(b, 700), 1);
  b.response_ms = 700;
  EXPECT_DOUBLE_EQ(DwlcWeight(b, 700), 0);
  b.response_ms = 1000;
  EXPECT_DOUBLE_EQ(DwlcWeight(b, 700), 0);
  b.response_ms = 100;
  b.weight = 0;  // quiesced by the operator
  EXPECT_DOUBLE_EQ(DwlcWeight(b, 700), 0);
}

}  // namespace
}  // namespace vsc::sched
