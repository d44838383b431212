// Vectors taken from the seeds and from LVS: exact sequences, hashes and weights.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

#include "common/ewma.h"
#include "common/random.h"
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

// The LVS wrr walk, literally (ip_vs_wrr.c / the seed's pseudo-code): no shortcuts.
class ReferenceWrr {
 public:
  explicit ReferenceWrr(const std::vector<Backend>& b) {
    int64_t g = 0, mx = 0;
    for (const Backend& x : b) {
      if (x.weight == 0) continue;
      g = std::gcd(g, static_cast<int64_t>(x.weight));
      mx = std::max(mx, static_cast<int64_t>(x.weight));
    }
    di_ = g ? g : 1;
    mw_ = mx - (di_ - 1);
    cw_ = mw_;
  }
  std::optional<size_t> Pick(const std::vector<Backend>& b) {
    if (std::none_of(b.begin(), b.end(), CanTakeNewWork) || mw_ <= 0) return std::nullopt;
    while (true) {
      if (i_ < 0) {
        i_ = 0;
      } else if (++i_ == static_cast<int64_t>(b.size())) {
        i_ = 0;
        cw_ -= di_;
        if (cw_ <= 0) cw_ = mw_;
      }
      if (CanTakeNewWork(b[i_]) && b[i_].weight >= cw_) return i_;
    }
  }

 private:
  int64_t i_ = -1, cw_, mw_, di_;
};

TEST(SeedVectors, WrrMatchesTheLiteralLvsWalkWithServersComingAndGoing) {
  Random rng(17);
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<uint32_t> weights(1 + rng.Uniform(8));
    for (uint32_t& w : weights) {
      w = static_cast<uint32_t>(rng.Uniform(4) == 0 ? 0
                                                    : 1 + rng.Uniform(rng.Uniform(2) ? 6 : 3000));
      if (trial % 3 == 0) w *= 4;  // a common divisor
    }
    auto b = WithWeights(weights);
    auto s = MakeOrDie("wrr");
    s->Rebuild(b);
    ReferenceWrr ref(b);
    for (int i = 0; i < 300; ++i) {
      if (rng.Uniform(10) == 0) {
        Backend& x = b[rng.Uniform(b.size())];
        x.available = !x.available;  // e.g. the biggest server goes DOWN for a while
      }
      ASSERT_EQ(s->Pick(b, Flow{}), ref.Pick(b)) << "trial " << trial << " pick " << i;
    }
  }
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
  EXPECT_EQ(ShBucket(0xAC10054Du), 61u);  // 172.16.5.77
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

TEST(SeedVectors, DwlcRepublishesOnlyForAMoveOfTwoPercentOfTheReference) {
  EXPECT_TRUE(DwlcWeightMoved(0, 3, 700)) << "the first measurement";
  EXPECT_TRUE(DwlcWeightMoved(3, 0, 700));
  EXPECT_FALSE(DwlcWeightMoved(100, 113, 700));
  EXPECT_TRUE(DwlcWeightMoved(100, 114, 700));
  EXPECT_TRUE(DwlcWeightMoved(114, 100, 700));
  EXPECT_FALSE(DwlcWeightMoved(800, 5000, 700)) << "saturated either way: weight 0 both";
  EXPECT_TRUE(DwlcWeightMoved(650, 800, 700));
}

TEST(SeedVectors, EwmaStepTakesTheFirstSampleAsIs) {
  EXPECT_DOUBLE_EQ(EwmaStep(0, 40, 0.5), 40);
  EXPECT_DOUBLE_EQ(EwmaStep(40, 20, 0.5), 30);
  EXPECT_DOUBLE_EQ(EwmaStep(16, 32, 1.0 / 16), 17);
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
