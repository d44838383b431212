#include "realserver/apply_pacer.h"

#include <gtest/gtest.h>

#include "common/clock.h"

namespace vsc::realserver {
namespace {

using namespace std::chrono_literals;

TEST(ApplyPacerTest, TheFirstTransactionAndOneAfterAnIdleGapStartAtOnce) {
  ManualClock clock;
  ApplyPacer pacer(5ms, 100);
  EXPECT_EQ(pacer.Delay(clock.Now(), 1), Duration::zero());
  pacer.Started(clock.Now());
  clock.Advance(5ms);
  EXPECT_EQ(pacer.Delay(clock.Now(), 1), Duration::zero());
  clock.Advance(1h);
  EXPECT_EQ(pacer.Delay(clock.Now(), 1), Duration::zero());
}

TEST(ApplyPacerTest, EntriesArrivingSoonAfterAStartWaitForTheRestOfTheInterval) {
  ManualClock clock;
  ApplyPacer pacer(5ms, 100);
  pacer.Started(clock.Now());
  clock.Advance(1ms);
  EXPECT_EQ(pacer.Delay(clock.Now(), 1), 4ms);
  clock.Advance(3ms);
  EXPECT_EQ(pacer.Delay(clock.Now(), 40), 1ms);
  clock.Advance(1ms);
  EXPECT_EQ(pacer.Delay(clock.Now(), 40), Duration::zero());
  // The interval counts from the latest start.
  pacer.Started(clock.Now());
  clock.Advance(2ms);
  EXPECT_EQ(pacer.Delay(clock.Now(), 1), 3ms);
}

TEST(ApplyPacerTest, AFullBatchStartsAtOnce) {
  ManualClock clock;
  ApplyPacer pacer(5ms, 100);
  pacer.Started(clock.Now());
  EXPECT_EQ(pacer.Delay(clock.Now(), 99), 5ms);
  EXPECT_EQ(pacer.Delay(clock.Now(), 100), Duration::zero());
  EXPECT_EQ(pacer.Delay(clock.Now(), 5000), Duration::zero());
}

TEST(ApplyPacerTest, ZeroIntervalNeverWaits) {
  ManualClock clock;
  ApplyPacer pacer(Duration::zero(), 100);
  pacer.Started(clock.Now());
  EXPECT_EQ(pacer.Delay(clock.Now(), 1), Duration::zero());
}

}  // namespace
}  // namespace vsc::realserver
