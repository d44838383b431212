#include "relay/rate_limit.h"

#include <gtest/gtest.h>

namespace vsc::relay {
namespace {

using namespace std::chrono_literals;

int TakeAll(TokenBucket& b, TimePoint now) {
  int n = 0;
  while (b.Take(now) && n < 1000) ++n;
  return n;
}

TEST(TokenBucketTest, ABurstThenTheRateAndNeverMoreThanTheBurst) {
  const TimePoint t0{};
  TokenBucket b(100, 5, t0);
  EXPECT_EQ(TakeAll(b, t0), 5);         // the burst at once
  EXPECT_EQ(TakeAll(b, t0 + 50ms), 5);  // 100/s for 50 ms: 5 more
  EXPECT_EQ(TakeAll(b, t0 + 60ms), 1);
  EXPECT_EQ(TakeAll(b, t0 + 10s), 5);  // a long pause refills to the burst only
  EXPECT_EQ(TakeAll(b, t0 + 5s), 0);   // time going backwards gives nothing
}

TEST(TokenBucketTest, RateZeroIsUnlimited) {
  const TimePoint t0{};
  TokenBucket b(0, 1, t0);
  EXPECT_EQ(TakeAll(b, t0), 1000);
}

}  // namespace
}  // namespace vsc::relay
