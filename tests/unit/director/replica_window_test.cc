#include "director/replica_window.h"

#include <gtest/gtest.h>

#include <deque>

#include "common/random.h"

namespace vsc::director {
namespace {

TEST(ReplicaWindowTest, FullAtEitherLimitAndFreedByAcks) {
  ReplicaWindow w({3, 100});
  EXPECT_TRUE(w.CanSend(10));
  w.OnSent(1, 10);
  w.OnSent(2, 10);
  EXPECT_FALSE(w.full());
  w.OnSent(3, 10);
  EXPECT_TRUE(w.full());  // 3 entries
  EXPECT_FALSE(w.CanSend(1));
  EXPECT_EQ(w.OnAcked(2), 2u);
  EXPECT_FALSE(w.full());
  EXPECT_EQ(w.entries(), 1u);
  EXPECT_EQ(w.bytes(), 10u);
  EXPECT_FALSE(w.CanSend(91));  // bytes would pass 100
  EXPECT_TRUE(w.CanSend(90));
  w.OnSent(4, 90);
  EXPECT_TRUE(w.full());  // 100 bytes
  EXPECT_DOUBLE_EQ(w.fill(), 1.0);
  EXPECT_EQ(w.OnAcked(1), 0u);  // an old ack releases nothing
  EXPECT_EQ(w.OnAcked(10), 2u);
  EXPECT_EQ(w.entries(), 0u);
  EXPECT_EQ(w.bytes(), 0u);
}

TEST(ReplicaWindowTest, AnEmptyWindowTakesOneOversizedEntry) {
  ReplicaWindow w({8, 100});
  EXPECT_TRUE(w.CanSend(1000));
  w.OnSent(1, 1000);
  EXPECT_TRUE(w.full());
  EXPECT_FALSE(w.CanSend(1));
  EXPECT_GT(w.fill(), 1.0);
  w.Reset();
  EXPECT_EQ(w.entries(), 0u);
  EXPECT_TRUE(w.CanSend(50));
}

// Random sends and acks against a plain model: counts, bytes, fullness and CanSend agree, and
// the window never holds more than its limits except one oversized entry alone.
TEST(ReplicaWindowTest, PropertyMatchesAModelUnderRandomTraffic) {
  for (uint64_t seed = 1; seed <= 50; ++seed) {
    Random rng(seed);
    const WindowLimits lim{static_cast<uint32_t>(1 + rng.Uniform(16)), 1 + rng.Uniform(4000)};
    ReplicaWindow w(lim);
    std::deque<std::pair<uint64_t, uint64_t>> model;
    uint64_t next = 1, acked = 0;
    for (int step = 0; step < 2000; ++step) {
      if (rng.Uniform(3) != 0) {
        const uint64_t bytes = rng.Uniform(600);
        uint64_t total = 0;
        for (auto& [s, b] : model) total += b;
        const bool expect = model.empty() || (model.size() < lim.max_entries &&
                                              total + bytes <= lim.max_bytes);
        ASSERT_EQ(w.CanSend(bytes), expect);
        if (expect) {
          w.OnSent(next, bytes);
          model.emplace_back(next, bytes);
          ++next;
        }
      } else {
        acked = std::min<uint64_t>(next - 1, acked + rng.Uniform(4));
        size_t released = 0;
        while (!model.empty() && model.front().first <= acked) {
          model.pop_front();
          ++released;
        }
        ASSERT_EQ(w.OnAcked(acked), released);
      }
      uint64_t total = 0;
      for (auto& [s, b] : model) total += b;
      ASSERT_EQ(w.entries(), model.size());
      ASSERT_EQ(w.bytes(), total);
      ASSERT_EQ(w.full(), model.size() >= lim.max_entries || total >= lim.max_bytes);
      ASSERT_LE(w.entries(), lim.max_entries);
      if (w.entries() > 1) {
        ASSERT_LE(w.bytes(), lim.max_bytes);
      }
    }
  }
}

}  // namespace
}  // namespace vsc::director
