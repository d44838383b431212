#include "common/clock.h"

#include <gtest/gtest.h>

namespace vsc {
namespace {

using namespace std::chrono_literals;

TEST(ManualClockTest, AdvancesOnlyWhenTold) {
  ManualClock clock;
  TimePoint t0 = clock.Now();
  int64_t w0 = clock.WallMicros();
  EXPECT_EQ(clock.Now(), t0);
  clock.Advance(250ms);
  EXPECT_EQ(clock.Now() - t0, 250ms);
  EXPECT_EQ(clock.WallMicros() - w0, 250'000);
}

TEST(RealClockTest, IsMonotonicAndWallIsRecent) {
  RealClock clock;
  TimePoint a = clock.Now();
  TimePoint b = clock.Now();
  EXPECT_LE(a, b);
  EXPECT_GT(clock.WallMicros(), 1'600'000'000'000'000);  // after 2020
}

}  // namespace
}  // namespace vsc
