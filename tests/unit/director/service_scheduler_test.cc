#include "director/service_scheduler.h"

#include <gtest/gtest.h>

#include <chrono>
#include <map>

namespace vsc::director {
namespace {

using namespace std::chrono_literals;

// Slots are stable per server id, as the control plane assigns them.
uint32_t SlotOf(const std::string& id) {
  static std::map<std::string, uint32_t> slots;
  auto [it, inserted] = slots.try_emplace(id, static_cast<uint32_t>(slots.size()));
  return it->second;
}

ViewPtr MakeView(std::vector<std::pair<std::string, uint32_t>> servers, std::string scheduler,
                 uint32_t persistence_s = 0) {
  auto v = std::make_shared<ClusterView>();
  v->scheduler = std::move(scheduler);
  v->persistence_timeout_s = persistence_s;
  for (auto& [id, weight] : servers) {
    ViewServer s;
    s.id = id;
    s.slot = SlotOf(id);
    s.backend.key = (s.slot + 1) * 7919;
    s.backend.weight = weight;
    v->services[kUdpService].push_back(s);
  }
  return v;
}

TEST(ServiceSchedulerTest, FollowsTheViewsScheduler) {
  ServiceScheduler s(kUdpService, {});
  s.OnView(MakeView({{"a", 1}, {"b", 1}}, "rr"));
  ManualClock clock;
  std::map<size_t, int> picks;
  for (int i = 0; i < 100; ++i) picks[*s.Pick({0x7f000001, uint16_t(i)}, clock.Now())]++;
  EXPECT_EQ(picks[0], 50);
  EXPECT_EQ(picks[1], 50);
  s.OnView(MakeView({{"a", 1}, {"b", 1}}, "sh"));
  size_t first = *s.Pick({0x0a000001, 1}, clock.Now());
  for (int i = 0; i < 20; ++i) EXPECT_EQ(*s.Pick({0x0a000001, uint16_t(i)}, clock.Now()), first);
}

TEST(ServiceSchedulerTest, ConnectionCountsSurviveANewViewAndFollowTheSlot) {
  ServiceScheduler s(kUdpService, {});
  s.OnView(MakeView({{"a", 1}, {"b", 1}}, "lc"));
  ManualClock clock;
  // Load "a" (index 0) with two open connections: lc must then prefer "b".
  s.Acquire(0);
  s.Acquire(0);
  EXPECT_EQ(*s.Pick({1, 1}, clock.Now()), 1u);
  // A new view that puts a new server "0" first: "a" moves to index 1 with its counts.
  s.OnView(MakeView({{"0", 1}, {"a", 1}, {"b", 1}}, "lc"));
  s.Acquire(0);  // the new server gets one
  s.Acquire(2);  // "b" gets one
  // Least connections is now "0" or "b" (1 each), never "a" (2).
  EXPECT_NE(*s.Pick({1, 1}, clock.Now()), 1u);
  s.ReleaseSlot(SlotOf("a"));  // "a" is index 1 now; its slot is what identifies it
  s.ReleaseSlot(SlotOf("a"));
  EXPECT_EQ(*s.Pick({1, 1}, clock.Now()), 1u);
}

TEST(ServiceSchedulerTest, DecayHalvesRecentCounts) {
  ServiceScheduler s(kUdpService, {});
  s.OnView(MakeView({{"a", 1}, {"b", 1}}, "lc"));
  ManualClock clock;
  for (int i = 0; i < 4; ++i) s.Acquire(0);
  s.Acquire(1);
  s.Decay();  // a: 2, b: 0
  EXPECT_EQ(*s.Pick({1, 1}, clock.Now()), 1u);
  s.Decay();
  s.Decay();  // a: 0
  s.Acquire(1);
  EXPECT_EQ(*s.Pick({1, 1}, clock.Now()), 0u);
}

TEST(ServiceSchedulerTest, PersistenceKeepsAClientOnItsServer) {
  ServiceScheduler s(kUdpService, {});
  s.OnView(MakeView({{"a", 1}, {"b", 1}, {"c", 1}}, "rr", 60));
  ManualClock clock;
  size_t first = *s.Pick({0x0a000005, 1000}, clock.Now());
  for (int i = 0; i < 10; ++i) EXPECT_EQ(*s.Pick({0x0a000005, uint16_t(2000 + i)}, clock.Now()), first);
  clock.Advance(61s);
  // After the timeout rr is free to move it; over three picks it must visit another server.
  bool moved = false;
  for (int i = 0; i < 3; ++i) {
    clock.Advance(61s);
    moved |= *s.Pick({0x0a000005, 1}, clock.Now()) != first;
  }
  EXPECT_TRUE(moved);
}

TEST(ServiceSchedulerTest, NoViewNoPick) {
  ServiceScheduler s(kUdpService, {});
  ManualClock clock;
  EXPECT_FALSE(s.Pick({1, 1}, clock.Now()).has_value());
  s.OnView(MakeView({}, "wlc"));
  EXPECT_FALSE(s.Pick({1, 1}, clock.Now()).has_value());
}

}  // namespace
}  // namespace vsc::director
