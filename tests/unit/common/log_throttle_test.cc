#include "common/log_throttle.h"

#include <gtest/gtest.h>

namespace vsc {
namespace {

using namespace std::chrono_literals;

TEST(LogThrottleTest, FirstLineAtOnceThenOncePerIntervalWithTheCountHeldBack) {
  ManualClock clock;
  LogThrottle t(5s);
  EXPECT_EQ(t.Admit("refused", clock.Now()), 0u);
  for (int i = 0; i < 3; ++i) {
    clock.Advance(1s);
    EXPECT_FALSE(t.Admit("refused", clock.Now()).has_value());
  }
  clock.Advance(1999ms);  // 4.999 s after the line
  EXPECT_FALSE(t.Admit("refused", clock.Now()).has_value());
  clock.Advance(1ms);
  EXPECT_EQ(t.Admit("refused", clock.Now()), 4u);
  clock.Advance(1s);
  EXPECT_FALSE(t.Admit("refused", clock.Now()).has_value());
}

TEST(LogThrottleTest, ADifferentProblemIsReportedAtOnce) {
  ManualClock clock;
  LogThrottle t(5s);
  EXPECT_EQ(t.Admit("connect refused", clock.Now()), 0u);
  clock.Advance(1s);
  EXPECT_FALSE(t.Admit("connect refused", clock.Now()).has_value());
  EXPECT_EQ(t.Admit("auth failed", clock.Now()), 0u);  // not the other kind's count
  EXPECT_EQ(t.Admit("connect refused", clock.Now()), 0u);
}

}  // namespace
}  // namespace vsc
