// Properties every scheduler must keep over random views: it never picks a backend that cannot
// take new work, it finds one whenever one exists, and it is deterministic.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <set>

#include "common/clock.h"
#include "common/random.h"
#include "sched/persistence.h"
#include "sched_test_util.h"

namespace vsc::sched {
namespace {

std::vector<Backend> RandomView(Random& rng) {
  std::vector<Backend> v(rng.Uniform(40));
  if (rng.Uniform(4) == 0) v.resize(64 + rng.Uniform(300));  // past sh's 256 buckets too
  for (size_t i = 0; i < v.size(); ++i) {
    Backend& b = v[i];
    b.key = rng.Next();
    const uint64_t w = rng.Uniform(10);
    b.weight = w < 3 ? 0 : static_cast<uint32_t>(w < 9 ? w : 1 + rng.Uniform(65535));
    b.available = rng.Uniform(3) != 0;
    b.active = static_cast<uint32_t>(rng.Uniform(3) == 0 ? 0 : rng.Uniform(10000));
    b.inactive = static_cast<uint32_t>(rng.Uniform(10000));
    b.run_queue = rng.NextDouble() * 8;
    b.response_ms = rng.Uniform(4) == 0 ? 0 : rng.NextDouble() * 1200;
  }
  return v;
}

// Changes what may change between Rebuilds: availability and counters (and, defensively,
// weights dropping to 0).
void Churn(Random& rng, std::vector<Backend>& v) {
  for (Backend& b : v) {
    if (rng.Uniform(5) == 0) b.available = !b.available;
    if (rng.Uniform(20) == 0) b.weight = 0;
    b.active = static_cast<uint32_t>(rng.Uniform(50));
    b.response_ms = rng.NextDouble() * 900;
  }
}

class EveryScheduler : public ::testing::TestWithParam<std::string_view> {};

TEST_P(EveryScheduler, NeverPicksAnUnusableBackendAndAlwaysFindsAUsableOne) {
  SchedulerOptions options;
  options.mh_table_size = 4093;  // keeps 300 rebuilds quick; the default is covered elsewhere
  auto s = testing::MakeOrDie(GetParam(), options);
  // One seed per view: a failing view is drawn again by its seed alone.
  for (uint64_t seed = 1; seed <= 300; ++seed) {
    SCOPED_TRACE(::testing::Message() << "view seed " << seed);
    Random rng(seed);
    std::vector<Backend> v = RandomView(rng);
    s->Rebuild(v);  // the same instance across views: Rebuild must forget the previous one
    for (int round = 0; round < 4; ++round) {
      const bool any = std::any_of(v.begin(), v.end(), CanTakeNewWork);
      for (int i = 0; i < 50; ++i) {
        const Flow f{static_cast<uint32_t>(rng.Next()), static_cast<uint16_t>(rng.Next())};
        auto p = s->Pick(v, f);
        ASSERT_EQ(p.has_value(), any) << "round " << round;
        if (p) {
          ASSERT_LT(*p, v.size());
          ASSERT_TRUE(CanTakeNewWork(v[*p])) << "round " << round << " picked " << *p;
        }
      }
      Churn(rng, v);
    }
  }
}

TEST_P(EveryScheduler, SameInputsAndSeedGiveTheSamePicks) {
  SchedulerOptions options;
  options.mh_table_size = 4093;
  // Many random views, one seed each, each into a fresh pair of instances: two schedulers built
  // alike from the same view agree on every pick, whatever the view.
  for (uint64_t seed = 1; seed <= 60; ++seed) {
    SCOPED_TRACE(::testing::Message() << "view seed " << seed);
    Random rng(seed);
    auto a = testing::MakeOrDie(GetParam(), options);
    auto b = testing::MakeOrDie(GetParam(), options);
    std::vector<Backend> v = RandomView(rng);
    while (std::none_of(v.begin(), v.end(), CanTakeNewWork)) v = RandomView(rng);
    a->Rebuild(v);
    b->Rebuild(v);
    for (int i = 0; i < 300; ++i) {
      const Flow f{static_cast<uint32_t>(rng.Next()), static_cast<uint16_t>(rng.Next())};
      const auto pa = a->Pick(v, f);
      ASSERT_EQ(pa, b->Pick(v, f)) << "pick " << i;
      if (pa) ++v[*pa].active;  // both see the same evolving counters
    }
  }
}

// Persistence in front of any scheduler: a client returns to the server it was first given
// while the load that the scheduler itself would follow keeps changing; new clients are still
// spread by the scheduler.
TEST_P(EveryScheduler, PersistenceKeepsEachClientOnItsFirstServer) {
  SchedulerOptions options;
  options.mh_table_size = 4093;
  auto s = testing::MakeOrDie(GetParam(), options);
  auto table = PersistenceTable::Create(PersistenceOptions{});
  ASSERT_TRUE(table.ok()) << table.status().ToString();
  std::vector<Backend> v = testing::WithWeights({1, 2, 3, 4, 5});
  for (size_t i = 0; i < v.size(); ++i) v[i].response_ms = 100.0 * static_cast<double>(i + 1);
  s->Rebuild(v);
  ManualClock clock;
  Random rng(11);
  std::vector<uint32_t> clients(400);
  for (uint32_t& ip : clients) ip = static_cast<uint32_t>(rng.Next());
  std::map<uint32_t, size_t> home;
  std::set<size_t> homes;
  for (int i = 0; i < 20000; ++i) {
    const uint32_t ip = clients[rng.Uniform(clients.size())];
    const Flow f{ip, static_cast<uint16_t>(rng.Next())};
    auto p = PickPersistent(*table, *s, v, f, clock.Now());
    ASSERT_TRUE(p.has_value()) << "pick " << i;
    auto [it, first] = home.emplace(ip, *p);
    ASSERT_EQ(*p, it->second) << "pick " << i << ": the client moved server";
    homes.insert(*p);
    ++v[*p].active;  // load changes that would move a pick made without persistence
    v[*p].run_queue += 0.01;
    clock.Advance(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(home.size(), clients.size());
  EXPECT_GT(homes.size(), 1u) << "every client was sent to one server";
}

INSTANTIATE_TEST_SUITE_P(All, EveryScheduler, ::testing::ValuesIn(SchedulerNames()),
                         [](const auto& info) { return std::string(info.param); });

TEST(Stickiness, HashSchedulersSendAClientToOneServer) {
  for (std::string_view name : {"sh", "mh"}) {
    auto s = testing::MakeOrDie(name);
    auto v = testing::WithWeights({3, 1, 2, 5, 1, 1});
    s->Rebuild(v);
    Random rng(3);
    for (int i = 0; i < 5000; ++i) {
      const Flow f{static_cast<uint32_t>(rng.Next()), static_cast<uint16_t>(i)};
      const auto first = s->Pick(v, f);
      ++v[*first].active;  // load changes do not move a hashed client
      for (int k = 0; k < 3; ++k) ASSERT_EQ(s->Pick(v, Flow{f.client_ip, 9}), first) << name;
    }
  }
}

TEST(Stickiness, ShFallbackMovesOnlyTheLostServersClients) {
  auto s = testing::MakeOrDie("sh");
  auto v = testing::WithWeights({1, 1, 1, 1});
  s->Rebuild(v);
  std::vector<size_t> home(256);
  for (uint32_t ip = 0; ip < 256; ++ip) home[ip] = *s->Pick(v, Flow{ip, 0});
  v[3].available = false;
  for (uint32_t ip = 0; ip < 256; ++ip) {
    const size_t now = *s->Pick(v, Flow{ip, 0});
    if (home[ip] != 3) {
      EXPECT_EQ(now, home[ip]);
    }
    EXPECT_NE(now, 3u);
  }
}

TEST(RoundRobin, SharesEquallyAmongUsableServersWhateverTheirWeight) {
  auto s = testing::MakeOrDie("rr");
  auto v = testing::WithWeights({1, 9, 0, 4});
  s->Rebuild(v);
  std::vector<int> counts(4, 0);
  for (int i = 0; i < 30000; ++i) ++counts[*s->Pick(v, Flow{})];
  EXPECT_EQ(counts, (std::vector<int>{10000, 10000, 0, 10000}));
}

}  // namespace
}  // namespace vsc::sched
