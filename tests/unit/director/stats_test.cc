#include "director/stats.h"

#include <gtest/gtest.h>

#include <chrono>

namespace vsc::director {
namespace {

using namespace std::chrono_literals;

TEST(StatsTest, TotalsOfRuntimeRecords) {
  DestRuntime d;
  d.connections = 7;
  d.packets_in = 3;
  d.bytes_out = 15;
  d.active_conns = 2;
  const Totals t = DestTotals(d);
  EXPECT_EQ(t.conns, 7u);
  EXPECT_EQ(t.in_packets, 3u);
  EXPECT_EQ(t.out_bytes, 15u);
  EXPECT_EQ(t.active, 2u);
  ServiceRuntime r;
  r.connections = 9;
  r.bytes_in = 100;
  EXPECT_EQ(ServiceTotals(r).conns, 9u);
  EXPECT_EQ(ServiceTotals(r).in_bytes, 100u);
}

TEST(StatsTest, RatesAreDeltasOverElapsedTime) {
  ManualClock clock;
  RateEstimator est;
  Totals t;
  est.Update("x", t, clock.Now());
  EXPECT_DOUBLE_EQ(est.Get("x").cps, 0);
  t.conns = 500;
  t.in_bytes = 2000;
  clock.Advance(2s);
  est.Update("x", t, clock.Now());
  EXPECT_DOUBLE_EQ(est.Get("x").cps, 250);
  EXPECT_DOUBLE_EQ(est.Get("x").in_bps, 1000);
  clock.Advance(1s);
  est.Update("x", t, clock.Now());  // nothing new
  EXPECT_DOUBLE_EQ(est.Get("x").cps, 0);
  EXPECT_DOUBLE_EQ(est.Get("unknown").cps, 0);
}

}  // namespace
}  // namespace vsc::director
