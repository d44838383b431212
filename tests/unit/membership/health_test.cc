#include "membership/health.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <chrono>
#include <optional>

#include "common/random.h"
#include "manual_time.h"

namespace vsc::membership {
namespace {

using std::chrono::milliseconds;
using vservice::CheckConfig;
using vservice::CheckType;

using testing_util::T;

CheckConfig Cfg(uint32_t retry, bool alpha = false) {
  CheckConfig c = vservice::DefaultCheck(CheckType::kTcp);
  c.delay_loop = milliseconds(1000);
  c.connect_timeout = milliseconds(300);
  c.delay_before_retry = milliseconds(100);
  c.retry = retry;
  c.alpha = alpha;
  return c;
}

const ProbeResult kOk{true, "connected", {}};
const ProbeResult kRefused{false, "connection refused", {}};

// Starts a probe at `now` and reports `r` at the same instant.
std::optional<HealthTransition> Probe(HealthCheck& hc, const ProbeResult& r, TimePoint now) {
  EXPECT_TRUE(hc.Due(now));
  (void)hc.Start(now);
  return hc.OnResult(r, now);
}

TEST(HealthCheckTest, WithoutAlphaStartsUpAndOneFailureIsEnough) {
  HealthCheck hc(Cfg(3), "10.0.0.1:80", T(0));
  EXPECT_TRUE(hc.up());
  auto t = Probe(hc, kRefused, T(0));
  ASSERT_TRUE(t);
  EXPECT_FALSE(t->up);
  EXPECT_TRUE(t->verdict_changed);
  EXPECT_EQ(t->reason, "TCP_CHECK on 10.0.0.1:80 failed after 0 retries: connection refused");
  EXPECT_EQ(hc.next_due(), T(1000));  // delay_loop, not delay_before_retry
}

TEST(HealthCheckTest, WithAlphaStartsDownAndOneSuccessBringsItUp) {
  HealthCheck hc(Cfg(3, /*alpha=*/true), "10.0.0.1:80", T(0));
  EXPECT_FALSE(hc.up());
  EXPECT_EQ(Probe(hc, kRefused, T(0)), std::nullopt);  // already down: nothing to report
  EXPECT_EQ(hc.next_due(), T(1000));
  auto t = Probe(hc, kOk, T(1000));
  ASSERT_TRUE(t);
  EXPECT_TRUE(t->up);
  EXPECT_EQ(t->reason, "TCP_CHECK on 10.0.0.1:80 succeeded: connected");
}

TEST(HealthCheckTest, WhileUpAFailureIsRetriedUntilRetriesAreExhausted) {
  for (uint32_t retry = 0; retry <= 4; ++retry) {
    SCOPED_TRACE(retry);
    HealthCheck hc(Cfg(retry), "10.0.0.1:80", T(0));
    ASSERT_EQ(Probe(hc, kOk, T(0)), std::nullopt);  // up already: no change
    int64_t now = 1000;
    for (uint32_t i = 0; i < retry; ++i) {
      ASSERT_EQ(Probe(hc, kRefused, T(now)), std::nullopt);
      EXPECT_EQ(hc.next_due(), T(now + 100));  // delay_before_retry
      now += 100;
    }
    EXPECT_TRUE(hc.up());
    auto t = Probe(hc, kRefused, T(now));
    ASSERT_TRUE(t);
    EXPECT_FALSE(t->up);
    EXPECT_EQ(t->reason, fmt::format("TCP_CHECK on 10.0.0.1:80 failed after {} {}: connection "
                                     "refused",
                                     retry, retry == 1 ? "retry" : "retries"));
    EXPECT_EQ(hc.next_due(), T(now + 1000));
    EXPECT_EQ(hc.failures(), retry + 1);
    EXPECT_EQ(hc.transitions(), 1u);
  }
}

TEST(HealthCheckTest, ASuccessEndsTheRetryStreak) {
  HealthCheck hc(Cfg(2), "h", T(0));
  ASSERT_EQ(Probe(hc, kOk, T(0)), std::nullopt);
  ASSERT_EQ(Probe(hc, kRefused, T(1000)), std::nullopt);
  ASSERT_EQ(Probe(hc, kRefused, T(1100)), std::nullopt);
  ASSERT_EQ(Probe(hc, kOk, T(1200)), std::nullopt);
  EXPECT_EQ(hc.next_due(), T(2200));
  ASSERT_EQ(Probe(hc, kRefused, T(2200)), std::nullopt);  // a new streak: two retries again
  ASSERT_EQ(Probe(hc, kRefused, T(2300)), std::nullopt);
  EXPECT_TRUE(hc.up());
  EXPECT_TRUE(Probe(hc, kRefused, T(2400)));
}

TEST(HealthCheckTest, OneProbeInFlightAndDeadlineIsTheProbeTimeout) {
  HealthCheck hc(Cfg(1), "h", T(5000));
  EXPECT_FALSE(hc.Due(T(4999)));
  EXPECT_TRUE(hc.Due(T(5000)));
  EXPECT_EQ(hc.Start(T(5000)), T(5300));
  EXPECT_TRUE(hc.in_flight());
  EXPECT_FALSE(hc.Due(T(9000)));
  (void)hc.OnResult(kOk, T(5250));
  EXPECT_EQ(hc.next_due(), T(6250));  // counted from the result
  CheckConfig misc = vservice::DefaultCheck(CheckType::kMisc);
  misc.misc_path = "/bin/true";
  misc.delay_loop = milliseconds(700);
  HealthCheck m(misc, "h", T(0));
  EXPECT_EQ(m.Start(T(0)), T(700));  // misc_timeout defaults to delay_loop
}

TEST(HealthCheckDeathTest, MisuseAborts) {
  HealthCheck hc(Cfg(1), "h", T(0));
  EXPECT_DEATH((void)hc.OnResult(kOk, T(0)), "no probe in flight");
  (void)hc.Start(T(0));
  EXPECT_DEATH((void)hc.Start(T(0)), "in flight");
  CheckConfig bad = Cfg(1);
  bad.delay_loop = Duration::zero();
  EXPECT_DEATH(HealthCheck(bad, "h", T(0)), "delay_loop");
}

TEST(HealthCheckTest, MiscExitCodes) {
  EXPECT_TRUE(MiscExitResult(0, false, false).ok);
  EXPECT_FALSE(MiscExitResult(1, false, true).ok);
  EXPECT_FALSE(MiscExitResult(7, false, false).ok);  // without misc_dynamic only 0 passes
  const ProbeResult dyn = MiscExitResult(7, false, true);
  EXPECT_TRUE(dyn.ok);
  EXPECT_EQ(dyn.weight, std::optional<uint32_t>(5));  // status - 2, as check_misc.c computes
  EXPECT_EQ(MiscExitResult(2, false, true).weight, std::optional<uint32_t>(0));
  EXPECT_EQ(MiscExitResult(255, false, true).weight, std::optional<uint32_t>(253));
  const ProbeResult killed = MiscExitResult(128 + 9, true, true);
  EXPECT_FALSE(killed.ok);
  EXPECT_EQ(killed.detail, "killed by signal 9");
}

TEST(HealthCheckTest, MiscDynamicWeightIsReportedWhenItChanges) {
  CheckConfig c = vservice::DefaultCheck(CheckType::kMisc);
  c.misc_path = "/bin/check";
  c.misc_dynamic = true;
  c.delay_loop = milliseconds(100);
  HealthCheck hc(c, "10.0.0.2:53", T(0));
  auto t = Probe(hc, MiscExitResult(7, false, true), T(0));
  ASSERT_TRUE(t);
  EXPECT_TRUE(t->up);
  EXPECT_FALSE(t->verdict_changed);
  EXPECT_EQ(t->weight, std::optional<uint32_t>(5));
  EXPECT_EQ(t->reason,
            "MISC_CHECK on 10.0.0.2:53 set weight 5 (was the configured weight): exit status 7");
  EXPECT_EQ(Probe(hc, MiscExitResult(7, false, true), T(100)), std::nullopt);  // unchanged
  EXPECT_EQ(Probe(hc, MiscExitResult(0, false, true), T(200)), std::nullopt);  // 0 keeps it
  EXPECT_EQ(hc.weight(), std::optional<uint32_t>(5));
  auto down = Probe(hc, MiscExitResult(1, false, true), T(300));  // retry 0: down at once
  ASSERT_TRUE(down);
  EXPECT_FALSE(down->up);
  auto up = Probe(hc, MiscExitResult(4, false, true), T(400));
  ASSERT_TRUE(up);
  EXPECT_TRUE(up->up);
  EXPECT_TRUE(up->verdict_changed);
  EXPECT_EQ(up->weight, std::optional<uint32_t>(2));
}

TEST(HealthCheckTest, ReconfigureKeepsTheVerdictAndChecksAgainNow) {
  HealthCheck hc(Cfg(0), "h", T(0));
  ASSERT_TRUE(Probe(hc, kRefused, T(0)));
  ASSERT_FALSE(hc.up());
  hc.Reconfigure(Cfg(3), T(10));
  EXPECT_FALSE(hc.up());  // a failed server is not re-added by a reload
  EXPECT_TRUE(hc.Due(T(10)));
  EXPECT_EQ(hc.config().retry, 3u);
  EXPECT_EQ(hc.transitions(), 1u);
}

// Over random outcomes and random probe durations, against a direct reading of keepalived's
// rule: the verdict turns DOWN exactly when retry + 1 failures in a row have been seen while UP
// (one at start without alpha), turns UP on the first success while DOWN, never otherwise; the
// schedule follows delay_before_retry/delay_loop; never two probes in flight.
TEST(HealthCheckTest, RandomResultSequencesFollowKeepalivedsRule) {
  Random rng(2026);
  for (int round = 0; round < 200; ++round) {
    const uint32_t retry = static_cast<uint32_t>(rng.Uniform(4));
    const bool alpha = rng.Uniform(2) == 1;
    HealthCheck hc(Cfg(retry, alpha), "h", T(0));
    bool up = !alpha;
    bool started = false;  // a success or a DOWN has been seen (the pre-set retry is gone)
    uint32_t streak = 0;   // failures in a row while UP
    int64_t now = 0;
    for (int i = 0; i < 300; ++i) {
      ASSERT_TRUE(hc.Due(T(now)));
      (void)hc.Start(T(now));
      ASSERT_FALSE(hc.Due(T(now + 5000)));
      now += static_cast<int64_t>(rng.Uniform(300));
      const bool ok = rng.Uniform(100) < 55;
      std::optional<bool> expected;
      bool retrying = false;
      if (ok) {
        streak = 0;
        if (!up) expected = true;
        started = true;
      } else if (up) {
        ++streak;
        const uint32_t needed = started ? retry + 1 : 1;
        if (streak >= needed) {
          expected = false;
          streak = 0;
          started = true;
        } else {
          retrying = true;
        }
      }
      auto t = hc.OnResult(ok ? kOk : kRefused, T(now));
      ASSERT_EQ(t.has_value(), expected.has_value()) << "round " << round << " i " << i;
      if (t) {
        ASSERT_EQ(t->up, *expected);
      }
      if (expected) up = *expected;
      ASSERT_EQ(hc.up(), up);
      ASSERT_EQ(hc.next_due(), T(now + (retrying ? 100 : 1000)));
      now += retrying ? 100 : 1000;
    }
    EXPECT_EQ(hc.checks(), 300u);
  }
}

}  // namespace
}  // namespace vsc::membership
