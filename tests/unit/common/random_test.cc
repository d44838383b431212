#include "common/random.h"

#include <gtest/gtest.h>

#include <array>
#include <cmath>

namespace vsc {
namespace {

TEST(RandomTest, SameSeedSameSequence) {
  Random a(42), b(42), c(43);
  bool differs = false;
  for (int i = 0; i < 100; ++i) {
    uint64_t x = a.Next();
    EXPECT_EQ(x, b.Next());
    differs |= (x != c.Next());
  }
  EXPECT_TRUE(differs);
}

TEST(RandomTest, UniformIsInRangeAndFlat) {
  Random r(7);
  constexpr int kBuckets = 10;
  constexpr int kDraws = 200'000;
  std::array<int, kBuckets> counts{};
  for (int i = 0; i < kDraws; ++i) {
    uint64_t v = r.Uniform(kBuckets);
    ASSERT_LT(v, static_cast<uint64_t>(kBuckets));
    counts[v]++;
  }
  for (int c : counts) EXPECT_NEAR(c, kDraws / kBuckets, kDraws / kBuckets * 0.03);
  for (int i = 0; i < 1000; ++i) {
    double d = r.NextDouble();
    ASSERT_GE(d, 0.0);
    ASSERT_LT(d, 1.0);
  }
}

}  // namespace
}  // namespace vsc
