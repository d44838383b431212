#include "realserver/load_monitor.h"

#include <gtest/gtest.h>

namespace vsc::realserver {
namespace {

TEST(LoadMonitorTest, ParsesProcLoadavg) {
  auto l = ParseLoadavg("0.20 0.18 0.12 3/80 11206\n");
  ASSERT_TRUE(l.ok());
  EXPECT_DOUBLE_EQ(l->load1, 0.20);
  EXPECT_DOUBLE_EQ(l->load15, 0.12);
  EXPECT_EQ(l->runnable, 3u);
  EXPECT_EQ(l->total, 80u);
  EXPECT_FALSE(ParseLoadavg("").ok());
  EXPECT_FALSE(ParseLoadavg("0.20 0.18 0.12 3 11206").ok());
  auto real = ReadLoadavg();
  ASSERT_TRUE(real.ok()) << real.status().ToString();
  EXPECT_GE(real->runnable, 1u);  // at least this test is running
}

TEST(LoadMonitorTest, TracksInFlightAndResponseTime) {
  LoadTracker t;
  t.Begin(3);
  EXPECT_EQ(t.in_flight(), 3u);
  t.End(3, 1000);  // 1 ms
  EXPECT_EQ(t.in_flight(), 0u);
  EXPECT_DOUBLE_EQ(t.response_ms(), 1.0);
  for (int i = 0; i < 200; ++i) {
    t.Begin(1);
    t.End(1, 5000);
  }
  EXPECT_NEAR(t.response_ms(), 5.0, 0.01);  // the EWMA converges to the new level
}

}  // namespace
}  // namespace vsc::realserver
