#include "director/read_queue.h"

#include <gtest/gtest.h>

#include <chrono>

#include "common/random.h"

namespace vsc::director {
namespace {

using namespace std::chrono_literals;

ReadCandidate C(std::string id, bool eligible, uint64_t applied, double load) {
  ReadCandidate c;
  c.id = std::move(id);
  c.eligible = eligible;
  c.applied_seq = applied;
  c.load = load;
  return c;
}

QueuedRead R(uint64_t id, uint64_t min_seq, TimePoint deadline) {
  QueuedRead r;
  r.request_id = id;
  r.min_seq = min_seq;
  r.deadline = deadline;
  return r;
}

TEST(PickReplicaTest, LeastLoadedAmongEligibleThatAppliedMinSeq) {
  std::vector<ReadCandidate> c = {C("a", true, 10, 5), C("b", false, 20, 0), C("c", true, 20, 3),
                                  C("d", true, 5, 1)};
  EXPECT_EQ(PickReplica(c, 0), std::optional<size_t>(3));   // d: least load
  EXPECT_EQ(PickReplica(c, 6), std::optional<size_t>(2));   // d has not applied 6
  EXPECT_EQ(PickReplica(c, 20), std::optional<size_t>(2));  // b is not eligible
  EXPECT_EQ(PickReplica(c, 21), std::nullopt);
  EXPECT_EQ(PickReplica({}, 0), std::nullopt);
  std::vector<ReadCandidate> tie = {C("a", true, 1, 2), C("b", true, 1, 2)};
  EXPECT_EQ(PickReplica(tie, 0), std::optional<size_t>(0));
}

TEST(PickReplicaTest, PropertyPickIsMinimalAndQualified) {
  Random rng(7);
  for (int round = 0; round < 5000; ++round) {
    std::vector<ReadCandidate> c;
    const size_t n = rng.Uniform(6);
    for (size_t i = 0; i < n; ++i) {
      c.push_back(C("r" + std::to_string(i), rng.Uniform(4) != 0, rng.Uniform(10),
                    static_cast<double>(rng.Uniform(5))));
    }
    const uint64_t min_seq = rng.Uniform(12);
    auto pick = PickReplica(c, min_seq);
    bool any = false;
    for (const auto& x : c) any |= x.eligible && x.applied_seq >= min_seq;
    ASSERT_EQ(pick.has_value(), any);
    if (!pick) continue;
    const ReadCandidate& p = c[*pick];
    ASSERT_TRUE(p.eligible);
    ASSERT_GE(p.applied_seq, min_seq);
    for (size_t i = 0; i < c.size(); ++i) {
      if (!c[i].eligible || c[i].applied_seq < min_seq) continue;
      ASSERT_LE(p.load, c[i].load);
      if (c[i].load == p.load) {
        ASSERT_LE(*pick, i);
      }
    }
  }
}

TEST(ReadQueueTest, FullQueueRefusesWithOverloadedAndTheCapacity) {
  ManualClock clock;
  ReadQueue q(2);
  ASSERT_TRUE(q.Push(R(1, 0, clock.Now() + 1s)).ok());
  ASSERT_TRUE(q.Push(R(2, 0, clock.Now() + 1s)).ok());
  Status s = q.Push(R(3, 0, clock.Now() + 1s));
  EXPECT_EQ(s.code(), Code::kResourceExhausted);
  EXPECT_EQ(s.message(), "overloaded: request queue full (2)");
  EXPECT_EQ(q.size(), 2u);
}

TEST(ReadQueueTest, DrainForwardsWhatCanGoInArrivalOrderAndKeepsTheRest) {
  ManualClock clock;
  ReadQueue q(10);
  for (uint64_t i = 1; i <= 6; ++i) ASSERT_TRUE(q.Push(R(i, i, clock.Now() + 1s)).ok());
  std::vector<uint64_t> sent;
  uint64_t applied = 3;  // a replica at seq 3 can take min_seq 1..3
  EXPECT_EQ(q.Drain([&](const QueuedRead& r) {
    if (r.min_seq > applied) return false;
    sent.push_back(r.request_id);
    return true;
  }), 3u);
  EXPECT_EQ(sent, (std::vector<uint64_t>{1, 2, 3}));
  EXPECT_EQ(q.size(), 3u);
  applied = 6;
  sent.clear();
  q.Drain([&](const QueuedRead& r) {
    sent.push_back(r.request_id);
    return r.min_seq <= applied;
  });
  EXPECT_EQ(sent, (std::vector<uint64_t>{4, 5, 6}));
  EXPECT_TRUE(q.empty());
}

TEST(ReadQueueTest, ExpireReturnsExactlyTheReadsPastTheirDeadline) {
  ManualClock clock;
  ReadQueue q(10);
  const TimePoint t0 = clock.Now();
  ASSERT_TRUE(q.Push(R(1, 0, t0 + 100ms)).ok());
  ASSERT_TRUE(q.Push(R(2, 0, t0 + 300ms)).ok());
  ASSERT_TRUE(q.Push(R(3, 0, t0 + 200ms)).ok());
  EXPECT_EQ(q.next_deadline(), std::optional<TimePoint>(t0 + 100ms));
  clock.Advance(99ms);
  EXPECT_TRUE(q.Expire(clock.Now()).empty());
  clock.Advance(1ms);
  auto out = q.Expire(clock.Now());
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].request_id, 1u);
  clock.Advance(150ms);
  out = q.Expire(clock.Now());
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].request_id, 3u);
  EXPECT_EQ(q.size(), 1u);
  EXPECT_EQ(q.next_deadline(), std::optional<TimePoint>(t0 + 300ms));
  // A freed slot is usable again.
  ReadQueue small(1);
  ASSERT_TRUE(small.Push(R(9, 0, t0)).ok());
  EXPECT_FALSE(small.Push(R(10, 0, t0)).ok());
  EXPECT_EQ(small.Expire(clock.Now()).size(), 1u);
  EXPECT_TRUE(small.Push(R(10, 0, t0)).ok());
}

}  // namespace
}  // namespace vsc::director
