#include "director/stats.h"

#include <gtest/gtest.h>

#include <chrono>

namespace vsc::director {
namespace {

using namespace std::chrono_literals;

TEST(StatsTest, SumsWorkersPerServiceAndSlot) {
  WorkerCounters a(4), b(4);
  a.servers[kUdpService][2].conns.Add(3);
  b.servers[kUdpService][2].conns.Add(4);
  b.servers[kTcpService][2].conns.Add(100);
  a.services[kUdpService].in_bytes.Add(10);
  b.services[kUdpService].in_bytes.Add(5);
  std::vector<WorkerCounters*> w{&a, &b};
  EXPECT_EQ(SumServer(w, kUdpService, 2).conns, 7u);
  EXPECT_EQ(SumServer(w, kTcpService, 2).conns, 100u);
  EXPECT_EQ(SumServer(w, kUdpService, 1).conns, 0u);
  EXPECT_EQ(SumService(w, kUdpService).in_bytes, 15u);
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
