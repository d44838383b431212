// lc, wlc, sed, nq, ll, dwlc: exact LVS comparisons on small views, and weight-proportional
// distribution when the caller opens and releases connections.
#include <gtest/gtest.h>

#include <cmath>

#include "common/random.h"
#include "sched/sh.h"
#include "sched_test_util.h"

namespace vsc::sched {
namespace {

using testing::MakeOrDie;
using testing::WithWeights;

std::vector<Backend> View(std::vector<uint32_t> weights, std::vector<uint32_t> active,
                          std::vector<uint32_t> inactive) {
  auto b = WithWeights(weights);
  for (size_t i = 0; i < b.size(); ++i) {
    b[i].active = active[i];
    b[i].inactive = inactive[i];
  }
  return b;
}

std::optional<size_t> PickOnce(std::string_view name, const std::vector<Backend>& b) {
  auto s = MakeOrDie(name);
  s->Rebuild(b);
  return s->Pick(b, Flow{});
}

TEST(LeastConn, LcMinimisesOverheadIgnoringWeight) {
  // overheads: 256*1+0 = 256, 256*0+300 = 300, 256*1+1 = 257
  EXPECT_EQ(PickOnce("lc", View({1, 100, 1}, {1, 0, 1}, {0, 300, 1})), 0u);
  EXPECT_EQ(PickOnce("lc", View({1, 1, 1}, {2, 1, 1}, {0, 0, 0})), 1u);  // tie -> first
}

TEST(LeastConn, WlcDividesByWeightWithoutDivision) {
  // 256/1 = 256 vs 768/4 = 192 vs 0/0 (quiesced, ignored)
  EXPECT_EQ(PickOnce("wlc", View({1, 4, 0}, {1, 3, 0}, {0, 0, 0})), 1u);
  // 512/2 = 256 ties 256/1 = 256: the first one wins, as in LVS
  EXPECT_EQ(PickOnce("wlc", View({2, 1}, {2, 1}, {0, 0})), 0u);
  // inactive connections count 1/256 of an active one
  EXPECT_EQ(PickOnce("wlc", View({1, 1}, {1, 1}, {5, 4})), 1u);
  // no overflow with huge counters and weights
  EXPECT_EQ(PickOnce("wlc", View({0xFFFFFFFFu, 0xFFFFFFFEu}, {0xFFFFFFFFu, 0xFFFFFFFFu},
                                 {0, 0})),
            0u);
}

TEST(LeastConn, SedCountsOnlyActivePlusOne) {
  // (0+1)/1 = 1 vs (2+1)/4 = 0.75: sed sends to the big idle-ish server; inactive is ignored.
  EXPECT_EQ(PickOnce("sed", View({1, 4}, {0, 2}, {0, 1000})), 1u);
}

TEST(LeastConn, NqPrefersTheFirstIdleServer) {
  EXPECT_EQ(PickOnce("nq", View({1, 4, 1}, {1, 2, 0}, {0, 0, 0})), 2u);
  // nobody idle: sed, (1+1)/1 = 2 vs (2+1)/4 = 0.75
  EXPECT_EQ(PickOnce("nq", View({1, 4, 1}, {1, 2, 3}, {0, 0, 0})), 1u);
  // an idle but quiesced server is not idle for nq
  EXPECT_EQ(PickOnce("nq", View({0, 1}, {0, 5}, {0, 0})), 1u);
}

TEST(LeastConn, LlPicksTheShortestRunQueueThenWeightThenActiveThenIndex) {
  auto b = WithWeights({1, 1, 3, 1});
  b[0].run_queue = 2.5;
  b[1].run_queue = 0.5;
  b[2].run_queue = 0.5;
  b[3].run_queue = 0.25;
  b[3].available = false;
  EXPECT_EQ(PickOnce("ll", b), 2u);  // 0.5 tie, higher weight
  b[2].weight = 1;
  b[1].active = 4;
  b[2].active = 3;
  EXPECT_EQ(PickOnce("ll", b), 2u);  // then fewer active
  b[2].active = 4;
  EXPECT_EQ(PickOnce("ll", b), 1u);  // then index
  b[1].run_queue = std::nan("");     // a garbled report never looks idle
  EXPECT_EQ(PickOnce("ll", b), 2u);
}

TEST(LeastConn, DwlcUsesResponseTimeAsWeight) {
  auto b = View({5, 5}, {3, 1}, {0, 0});
  b[0].response_ms = 100;  // w = 600, 768/600 = 1.28
  b[1].response_ms = 600;  // w = 100, 256/100 = 2.56
  EXPECT_EQ(PickOnce("dwlc", b), 0u);
  b[0].response_ms = 700;  // saturated: weight 0, takes nothing while another can
  EXPECT_EQ(PickOnce("dwlc", b), 1u);
  b[1].response_ms = 0;    // unmeasured server uses its configured weight 5: still eligible
  EXPECT_EQ(PickOnce("dwlc", b), 1u);
}

TEST(LeastConn, DwlcWhenEveryoneIsSaturated) {
  auto b = View({1, 3}, {1, 1}, {0, 0});
  b[0].response_ms = 900;
  b[1].response_ms = 700;
  EXPECT_EQ(PickOnce("dwlc", b), 1u);  // default: wlc by configured weights (256/3 < 256/1)
  SchedulerOptions strict;
  strict.dwlc_fallback_when_saturated = false;
  auto s = MakeOrDie("dwlc", strict);
  EXPECT_EQ(s->Pick(b, Flow{}), std::nullopt);  // the seed's letter
}

// Keeps `concurrency` connections open; each step opens one (the pick) and closes a random open
// one, as a caller maintaining `active` does. Returns picks per backend.
std::vector<uint64_t> Simulate(Scheduler& s, std::vector<Backend> b, int concurrency,
                               int picks) {
  Random rng(42);
  Random clients(43);  // random client addresses and ports: none of these may depend on them
  std::vector<uint64_t> counts(b.size(), 0);
  std::vector<size_t> open;
  s.Rebuild(b);
  for (int i = 0; i < picks; ++i) {
    auto p = s.Pick(
        b, Flow{static_cast<uint32_t>(clients.Next()), static_cast<uint16_t>(clients.Next())});
    if (!p) {
      ADD_FAILURE() << "no pick";
      break;
    }
    ++counts[*p];
    ++b[*p].active;
    open.push_back(*p);
    if (open.size() > static_cast<size_t>(concurrency)) {
      const size_t k = rng.Uniform(open.size());
      --b[open[k]].active;
      open[k] = open.back();
      open.pop_back();
    }
  }
  return counts;
}

void ExpectShares(const std::vector<uint64_t>& counts, const std::vector<double>& expected,
                  double tolerance) {
  uint64_t total = 0;
  for (uint64_t c : counts) total += c;
  double expected_total = 0;
  for (double e : expected) expected_total += e;
  for (size_t i = 0; i < counts.size(); ++i) {
    const double share = static_cast<double>(counts[i]) / total;
    const double want = expected[i] / expected_total;
    EXPECT_NEAR(share, want, want * tolerance) << "backend " << i;
  }
}

TEST(LeastConnDistribution, WlcFollowsWeightsWithin1Percent) {
  auto s = MakeOrDie("wlc");
  auto counts = Simulate(*s, WithWeights({1, 2, 3, 4}), 5000, 200000);
  ExpectShares(counts, {1, 2, 3, 4}, 0.01);
}

TEST(LeastConnDistribution, LcSharesEquallyWithin1Percent) {
  auto s = MakeOrDie("lc");
  auto counts = Simulate(*s, WithWeights({1, 2, 3, 4}), 5000, 200000);
  ExpectShares(counts, {1, 1, 1, 1}, 0.01);
}

TEST(LeastConnDistribution, SedAndNqFollowWeightsUnderLoad) {
  // With thousands of connections open nobody is idle: nq is sed, shares follow the weights.
  for (std::string_view name : {"sed", "nq"}) {
    SCOPED_TRACE(name);
    auto s = MakeOrDie(name);
    auto counts = Simulate(*s, WithWeights({1, 2, 3, 4}), 5000, 200000);
    ExpectShares(counts, {1, 2, 3, 4}, 0.01);
  }
}

TEST(LeastConnDistribution, LlSharesEqualRunQueuesByActiveConnections) {
  // Equal run queues and weights: ll falls back to the fewest active, so shares are equal.
  auto s = MakeOrDie("ll");
  auto b = WithWeights({1, 1, 1, 1});
  for (Backend& x : b) x.run_queue = 1.5;
  auto counts = Simulate(*s, b, 5000, 200000);
  ExpectShares(counts, {1, 1, 1, 1}, 0.01);
}

TEST(LeastConnDistribution, LlSendsEverythingToTheShortestRunQueues) {
  auto s = MakeOrDie("ll");
  auto b = WithWeights({1, 1, 1, 1});
  const double queues[] = {3.0, 0.5, 2.0, 0.5};
  for (size_t i = 0; i < b.size(); ++i) b[i].run_queue = queues[i];
  auto counts = Simulate(*s, b, 5000, 200000);
  EXPECT_EQ(counts[0], 0u);
  EXPECT_EQ(counts[2], 0u);
  ExpectShares({counts[1], counts[3]}, {1, 1}, 0.01);
}

TEST(LeastConnDistribution, DwlcFollowsWeightsFromResponseTimes) {
  // w = 700 - T: 100, 300, 500 ms give 600, 400, 200, whatever the configured weights.
  auto s = MakeOrDie("dwlc");
  auto b = WithWeights({5, 5, 5});
  const double response_ms[] = {100, 300, 500};
  for (size_t i = 0; i < b.size(); ++i) b[i].response_ms = response_ms[i];
  auto counts = Simulate(*s, b, 5000, 200000);
  ExpectShares(counts, {600, 400, 200}, 0.01);
}

TEST(HashDistribution, ShFollowsItsBucketsOverRandomClientAddresses) {
  // Uniformly random clients fill the 256 buckets evenly, so each server's share is its share
  // of the buckets, which the weights tile (SeedVectors.ShTilesBucketsByWeightAsLvs).
  SourceHashScheduler s;
  auto b = WithWeights({1, 2, 3, 4});
  s.Rebuild(b);
  std::vector<double> buckets(b.size(), 0);
  for (uint32_t i = 0; i < kShBuckets; ++i) ++buckets[s.buckets()[i]];
  for (size_t i = 0; i < b.size(); ++i) {
    EXPECT_NEAR(buckets[i] / kShBuckets, (i + 1) / 10.0, 0.02) << "server " << i;
  }
  Random clients(44);
  std::vector<uint64_t> counts(b.size(), 0);
  for (int i = 0; i < 200000; ++i) {
    auto p = s.Pick(b, Flow{static_cast<uint32_t>(clients.Next()), 0});
    ASSERT_TRUE(p.has_value());
    ++counts[*p];
  }
  ExpectShares(counts, buckets, 0.03);
}

TEST(LeastConnDistribution, WrrFollowsWeightsExactlyPerCycle) {
  auto s = MakeOrDie("wrr");
  auto b = WithWeights({1, 2, 3, 4, 7});
  s->Rebuild(b);
  std::vector<uint64_t> counts(b.size(), 0);
  for (int i = 0; i < 170000; ++i) ++counts[*s->Pick(b, Flow{})];  // 10000 cycles of 17
  EXPECT_EQ(counts, (std::vector<uint64_t>{10000, 20000, 30000, 40000, 70000}));
  ExpectShares(counts, {1, 2, 3, 4, 7}, 0.01);
}

}  // namespace
}  // namespace vsc::sched
