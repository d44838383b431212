#include "proto/auth.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "common/random.h"
#include "key_fixtures.h"

namespace vsc::proto {
namespace {

using testing::Hex;
using testing::SequentialKey;

std::span<const uint8_t> AsBytes(std::string_view s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

TEST(HmacSha256Test, MatchesIndependentReference) {
  // Expected values from Python's hmac module with key 00 01 .. 1f.
  HmacSha256 mac(SequentialKey());
  EXPECT_EQ(Hex(mac.Compute(AsBytes("abc"))),
            "f0133729c4163dede81e21cd47839256da58171238c8a0d874397c73b14e1e47");
  EXPECT_EQ(Hex(mac.Compute({})),
            "d38b42096d80f45f826b44a9d5607de72496a415d3f4a1a8c88e3bb9da8dc1cb");
  // The reused context gives the same answer again.
  EXPECT_EQ(Hex(mac.Compute(AsBytes("abc"))),
            "f0133729c4163dede81e21cd47839256da58171238c8a0d874397c73b14e1e47");
}

TEST(HmacSha256Test, VerifyAcceptsOnlyTheRightTag) {
  HmacSha256 mac(SequentialKey());
  const auto data = AsBytes("heartbeat");
  HmacSha256::Tag tag = mac.Compute(data);
  EXPECT_TRUE(mac.Verify(data, tag));
  for (size_t i = 0; i < tag.size() * 8; ++i) {
    HmacSha256::Tag bad = tag;
    bad[i / 8] ^= static_cast<uint8_t>(1u << (i % 8));
    EXPECT_FALSE(mac.Verify(data, bad)) << "bit " << i;
  }
  EXPECT_FALSE(mac.Verify(AsBytes("heartbeaT"), tag));
  auto other = ClusterKey::Generate();
  ASSERT_TRUE(other.ok());
  HmacSha256 other_mac(*other);
  EXPECT_FALSE(other_mac.Verify(data, tag));
}

TEST(HmacSha256Test, MovedContextKeepsTheKey) {
  HmacSha256 a(SequentialKey());
  const HmacSha256::Tag expected = a.Compute(AsBytes("x"));
  HmacSha256 b(std::move(a));
  EXPECT_EQ(b.Compute(AsBytes("x")), expected);
  HmacSha256 c(ClusterKey::Generate().value());
  c = std::move(b);
  EXPECT_EQ(c.Compute(AsBytes("x")), expected);
}

TEST(ReplayGuardTest, DuplicateRefused) {
  ReplayGuard guard;
  EXPECT_TRUE(guard.Accept("rs1", 1000).ok());
  const Status dup = guard.Accept("rs1", 1000);
  ASSERT_FALSE(dup.ok());
  EXPECT_EQ(dup.code(), Code::kUnauthenticated);
  EXPECT_NE(dup.message().find("replay"), std::string::npos);
  EXPECT_TRUE(guard.Accept("rs1", 1001).ok());
  EXPECT_FALSE(guard.Accept("rs1", 1001).ok());
  EXPECT_FALSE(guard.Accept("rs1", 1000).ok());
}

TEST(ReplayGuardTest, WindowEdge) {
  ReplayGuard guard;
  ASSERT_TRUE(guard.Accept("rs1", 1000).ok());
  // 63 below the highest is inside the window, 64 below is outside.
  EXPECT_TRUE(guard.Accept("rs1", 1000 - 63).ok());
  const Status old = guard.Accept("rs1", 1000 - 64);
  ASSERT_FALSE(old.ok());
  EXPECT_EQ(old.code(), Code::kUnauthenticated);
  EXPECT_NE(old.message().find("window"), std::string::npos);
  EXPECT_FALSE(guard.Accept("rs1", 0).ok());
}

TEST(ReplayGuardTest, ReorderedWithinWindowAcceptedExactlyOnce) {
  Random rng(5);
  ReplayGuard guard;
  const uint64_t base = 1'700'000'000'000'000;
  std::vector<uint64_t> counters;
  for (uint64_t i = 0; i < ReplayGuard::kWindow; ++i) counters.push_back(base + i);
  // The newest arrives first, then the rest in a random order.
  std::swap(counters.front(), counters.back());
  for (size_t i = counters.size() - 1; i > 1; --i) {
    std::swap(counters[i], counters[1 + rng.Uniform(i)]);
  }
  for (uint64_t c : counters) EXPECT_TRUE(guard.Accept("rs1", c).ok()) << c;
  for (uint64_t c : counters) EXPECT_FALSE(guard.Accept("rs1", c).ok()) << c;
}

TEST(ReplayGuardTest, LargeJumpForgetsTheOldWindow) {
  ReplayGuard guard;
  ASSERT_TRUE(guard.Accept("rs1", 10).ok());
  ASSERT_TRUE(guard.Accept("rs1", 10 + 1000).ok());
  EXPECT_TRUE(guard.Accept("rs1", 10 + 999).ok());
  EXPECT_FALSE(guard.Accept("rs1", 10).ok());
  ASSERT_TRUE(guard.Accept("rs1", UINT64_MAX).ok());
  EXPECT_FALSE(guard.Accept("rs1", UINT64_MAX).ok());
  EXPECT_TRUE(guard.Accept("rs1", UINT64_MAX - 63).ok());
}

// The guard agrees with the definition (set of accepted counters + highest) on random traffic
// with duplicates, reordering and stale messages.
TEST(ReplayGuardTest, MatchesReferenceModel) {
  Random rng(42);
  ReplayGuard guard;
  std::set<uint64_t> accepted;
  uint64_t highest = 0;
  bool any = false;
  uint64_t next = 5'000;
  int accepted_count = 0, duplicates = 0, stale = 0;
  for (int i = 0; i < 200'000; ++i) {
    uint64_t c;
    switch (rng.Uniform(4)) {
      case 0:
        c = next++;
        break;  // in order
      case 1:
        c = next + rng.Uniform(80);
        next = std::max(next, c + 1);
        break;  // ahead, gaps
      case 2:
        c = next - std::min<uint64_t>(next, rng.Uniform(100));
        break;  // late
      default:
        c = any ? highest - std::min<uint64_t>(highest, rng.Uniform(70)) : next;
        break;
    }
    const bool fresh = !accepted.count(c) && (!any || c > highest || highest - c < 64);
    const Status s = guard.Accept("rs", c);
    ASSERT_EQ(s.ok(), fresh) << "op " << i << " counter " << c << " highest " << highest;
    if (fresh) {
      accepted.insert(c);
      highest = any ? std::max(highest, c) : c;
      any = true;
      ++accepted_count;
    } else if (accepted.count(c)) {
      ++duplicates;
    } else {
      ++stale;
    }
  }
  // Every outcome was exercised many times.
  EXPECT_GT(accepted_count, 50'000);
  EXPECT_GT(duplicates, 5'000);
  EXPECT_GT(stale, 5'000);
}

TEST(ReplayGuardTest, SendersAreIndependent) {
  ReplayGuard guard;
  ASSERT_TRUE(guard.Accept("rs1", 500).ok());
  // rs2's counters are not judged against rs1's.
  EXPECT_TRUE(guard.Accept("rs2", 10).ok());
  EXPECT_FALSE(guard.Accept("rs1", 10).ok());
  EXPECT_TRUE(guard.Accept("rs2", 500).ok());
  EXPECT_FALSE(guard.Accept("rs2", 500).ok());
  EXPECT_EQ(guard.senders(), 2u);
}

TEST(ReplayGuardTest, LeastRecentlyUsedSenderEvicted) {
  ReplayGuard guard(2);
  ASSERT_TRUE(guard.Accept("a", 100).ok());
  ASSERT_TRUE(guard.Accept("b", 100).ok());
  ASSERT_TRUE(guard.Accept("a", 101).ok());  // a is now the most recent
  ASSERT_TRUE(guard.Accept("c", 100).ok());  // evicts b
  EXPECT_EQ(guard.senders(), 2u);
  EXPECT_EQ(guard.evictions(), 1u);
  EXPECT_FALSE(guard.Accept("a", 101).ok());  // a's window survived
  EXPECT_FALSE(guard.Accept("c", 100).ok());
  // The documented cost: b's old message is accepted once more after its eviction.
  EXPECT_TRUE(guard.Accept("b", 100).ok());
  EXPECT_EQ(guard.evictions(), 2u);  // and a (least recent now) made room
  EXPECT_TRUE(guard.Accept("a", 101).ok());
}

TEST(ReplayGuardTest, ForgetResetsOneSender) {
  ReplayGuard guard;
  ASSERT_TRUE(guard.Accept("rs1", 1000).ok());
  ASSERT_TRUE(guard.Accept("rs2", 1000).ok());
  guard.Forget("rs1");
  guard.Forget("unknown");
  EXPECT_EQ(guard.senders(), 1u);
  EXPECT_TRUE(guard.Accept("rs1", 5).ok());  // e.g. its clock stepped back across a restart
  EXPECT_FALSE(guard.Accept("rs2", 1000).ok());
}

TEST(CounterSourceTest, StartsAtWallClockAndIncreases) {
  CounterSource source(1'700'000'000'000'000);
  uint64_t prev = source.Next();
  EXPECT_EQ(prev, 1'700'000'000'000'000u);
  for (int i = 0; i < 1000; ++i) {
    const uint64_t c = source.Next();
    EXPECT_GT(c, prev);
    prev = c;
  }
  CounterSource negative(-5);
  EXPECT_EQ(negative.Next(), 0u);
}

TEST(CounterSourceTest, RestartedSenderIsNotTakenForAReplayer) {
  ReplayGuard guard;
  CounterSource first(1'700'000'000'000'000);
  for (int i = 0; i < 1000; ++i) ASSERT_TRUE(guard.Accept("rs1", first.Next()).ok());
  // The process restarts one second later and begins a new counter from the wall clock.
  CounterSource second(1'700'000'001'000'000);
  for (int i = 0; i < 1000; ++i) ASSERT_TRUE(guard.Accept("rs1", second.Next()).ok());
}

TEST(CounterSourceTest, ConcurrentCallersGetDistinctCounters) {
  CounterSource source(1000);
  constexpr int kPerThread = 20'000;
  std::vector<uint64_t> a, b;
  std::thread t1([&] {
    for (int i = 0; i < kPerThread; ++i) a.push_back(source.Next());
  });
  std::thread t2([&] {
    for (int i = 0; i < kPerThread; ++i) b.push_back(source.Next());
  });
  t1.join();
  t2.join();
  std::set<uint64_t> all(a.begin(), a.end());
  all.insert(b.begin(), b.end());
  EXPECT_EQ(all.size(), 2u * kPerThread);
  EXPECT_EQ(*all.begin(), 1000u);
  EXPECT_EQ(*all.rbegin(), 1000u + 2 * kPerThread - 1);
}

}  // namespace
}  // namespace vsc::proto
