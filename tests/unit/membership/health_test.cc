#include "membership/health.h"

#include <gtest/gtest.h>

#include <chrono>
#include <optional>
#include <vector>

#include "common/random.h"

namespace vsc::membership {
namespace {

using std::chrono::milliseconds;

TimePoint T(int64_t ms) { return TimePoint(milliseconds(ms)); }

HealthCheckConfig Cfg(int rise, int fall) {
  return HealthCheckConfig{milliseconds(1000), milliseconds(300), rise, fall};
}

TEST(HealthCheckTest, StartsDownAndRisesAfterExactlyRiseSuccesses) {
  for (int rise = 1; rise <= 5; ++rise) {
    SCOPED_TRACE(rise);
    HealthCheck hc(Cfg(rise, 3), T(0));
    EXPECT_FALSE(hc.up());
    for (int i = 1; i < rise; ++i) EXPECT_EQ(hc.OnResult(true, T(i)), std::nullopt);
    EXPECT_FALSE(hc.up());
    EXPECT_EQ(hc.OnResult(true, T(rise)), std::optional<bool>(true));
    EXPECT_TRUE(hc.up());
    EXPECT_EQ(hc.OnResult(true, T(rise + 1)), std::nullopt);  // already up: no change reported
  }
}

TEST(HealthCheckTest, FallsAfterExactlyFallFailures) {
  for (int fall = 1; fall <= 5; ++fall) {
    SCOPED_TRACE(fall);
    HealthCheck hc(Cfg(1, fall), T(0));
    ASSERT_EQ(hc.OnResult(true, T(0)), std::optional<bool>(true));
    for (int i = 1; i < fall; ++i) EXPECT_EQ(hc.OnResult(false, T(i)), std::nullopt);
    EXPECT_TRUE(hc.up());
    EXPECT_EQ(hc.OnResult(false, T(fall)), std::optional<bool>(false));
    EXPECT_FALSE(hc.up());
    EXPECT_EQ(hc.OnResult(false, T(fall + 1)), std::nullopt);
  }
}

TEST(HealthCheckTest, AnInterruptedStreakStartsOver) {
  HealthCheck hc(Cfg(2, 3), T(0));
  EXPECT_EQ(hc.OnResult(true, T(1)), std::nullopt);
  EXPECT_EQ(hc.OnResult(false, T(2)), std::nullopt);  // resets the rise streak
  EXPECT_EQ(hc.OnResult(true, T(3)), std::nullopt);
  EXPECT_EQ(hc.OnResult(true, T(4)), std::optional<bool>(true));
  EXPECT_EQ(hc.OnResult(false, T(5)), std::nullopt);
  EXPECT_EQ(hc.OnResult(false, T(6)), std::nullopt);
  EXPECT_EQ(hc.OnResult(true, T(7)), std::nullopt);  // resets the fall streak
  EXPECT_EQ(hc.OnResult(false, T(8)), std::nullopt);
  EXPECT_EQ(hc.OnResult(false, T(9)), std::nullopt);
  EXPECT_TRUE(hc.up());
  EXPECT_EQ(hc.OnResult(false, T(10)), std::optional<bool>(false));
  EXPECT_EQ(hc.checks(), 10u);
}

TEST(HealthCheckTest, ScheduleFollowsIntervalAndWaitsForTheProbeInFlight) {
  HealthCheck hc(Cfg(2, 3), T(5000));
  EXPECT_FALSE(hc.Due(T(4999)));
  EXPECT_TRUE(hc.Due(T(5000)));
  EXPECT_EQ(hc.Start(T(5000)), T(5300));
  EXPECT_TRUE(hc.in_flight());
  EXPECT_FALSE(hc.Due(T(7000)));  // one probe at a time
  (void)hc.OnResult(true, T(5100));
  EXPECT_FALSE(hc.Due(T(5999)));
  EXPECT_TRUE(hc.Due(T(6000)));  // interval counted from the previous start
  // A probe that takes longer than the interval delays the next one until it is reported.
  (void)hc.Start(T(6000));
  (void)hc.OnResult(false, T(7200));
  EXPECT_TRUE(hc.Due(T(7200)));
  // Unscheduled results (the shell's own timing) push the next check one interval out.
  HealthCheck free_running(Cfg(2, 3), T(0));
  (void)free_running.OnResult(true, T(40));
  EXPECT_FALSE(free_running.Due(T(1039)));
  EXPECT_TRUE(free_running.Due(T(1040)));
}

TEST(HealthCheckTest, SuccessAfterTheDeadlineCountsAsFailure) {
  HealthCheck hc(Cfg(1, 1), T(0));
  (void)hc.Start(T(0));
  EXPECT_EQ(hc.OnResult(true, T(300)), std::optional<bool>(true));  // at the deadline: in time
  (void)hc.Start(T(1000));
  EXPECT_EQ(hc.OnResult(true, T(1301)), std::optional<bool>(false));  // too late
  EXPECT_EQ(hc.late_results(), 1u);
}

// Against a direct reading of the rule over random outcomes: the verdict changes exactly when
// the last `rise` outcomes were successes (while down) or the last `fall` failures (while up).
TEST(HealthCheckTest, RandomOutcomesMatchTheStreakRule) {
  Random rng(2024);
  for (int round = 0; round < 50; ++round) {
    const int rise = 1 + static_cast<int>(rng.Uniform(4));
    const int fall = 1 + static_cast<int>(rng.Uniform(4));
    HealthCheck hc(Cfg(rise, fall), T(0));
    std::vector<bool> history;
    bool up = false;
    int changes = 0;
    for (int i = 0; i < 500; ++i) {
      const bool ok = rng.Uniform(100) < 60;
      history.push_back(ok);
      auto tail_all = [&](int n, bool value) {
        if (static_cast<int>(history.size()) < n) return false;
        for (int k = 0; k < n; ++k) {
          if (history[history.size() - 1 - k] != value) return false;
        }
        return true;
      };
      std::optional<bool> expected;
      if (!up && tail_all(rise, true)) expected = true;
      if (up && tail_all(fall, false)) expected = false;
      if (expected) {
        up = *expected;
        ++changes;
      }
      ASSERT_EQ(hc.OnResult(ok, T(i)), expected) << "round " << round << " i " << i;
      ASSERT_EQ(hc.up(), up);
    }
    EXPECT_GT(changes, 0);
  }
}

TEST(HealthCheckTest, ValidationRejectsNonsense) {
  EXPECT_TRUE(ValidateHealthCheckConfig(HealthCheckConfig{}).ok());
  EXPECT_FALSE(
      ValidateHealthCheckConfig(HealthCheckConfig{Duration::zero(), milliseconds(1), 2, 3}).ok());
  EXPECT_FALSE(
      ValidateHealthCheckConfig(HealthCheckConfig{milliseconds(1), Duration::zero(), 2, 3}).ok());
  EXPECT_FALSE(ValidateHealthCheckConfig(Cfg(0, 3)).ok());
  EXPECT_FALSE(ValidateHealthCheckConfig(Cfg(2, 0)).ok());
}

TEST(HealthCheckDeathTest, InvalidConfigAborts) {
  EXPECT_DEATH(HealthCheck(Cfg(0, 3), T(0)), "rise");
}

}  // namespace
}  // namespace vsc::membership
