#include "replication/commit_tracker.h"

#include <gtest/gtest.h>

#include "common/random.h"

namespace vsc::replication {
namespace {

EntryResult Ok(uint64_t seq, int64_t rows = 1) {
  EntryResult r;
  r.seq = seq;
  r.rows_changed = rows;
  return r;
}

Digest D(uint8_t b) {
  Digest d{};
  d[0] = b;
  return d;
}

TEST(CommitTrackerTest, ParsesPolicies) {
  for (auto p : {CommitPolicy::kAll, CommitPolicy::kMajority, CommitPolicy::kOne}) {
    auto parsed = ParseCommitPolicy(CommitPolicyName(p));
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(*parsed, p);
  }
  EXPECT_EQ(ParseCommitPolicy("quorum").status().message(),
            "commit policy must be all, majority or one, not 'quorum'");
}

TEST(CommitTrackerTest, NoReplicaMeansUnavailable) {
  CommitTracker t(CommitPolicy::kAll);
  Status st = t.Track(1, {});
  EXPECT_EQ(st.code(), Code::kUnavailable);
  EXPECT_EQ(st.message(), "no replica is up; the write was not applied");
  EXPECT_EQ(t.pending(), 0u);
}

TEST(CommitTrackerTest, AllWaitsForEveryReplicaAndAnswersInOrder) {
  CommitTracker t(CommitPolicy::kAll);
  ASSERT_TRUE(t.Track(1, {"a", "b"}).ok());
  ASSERT_TRUE(t.Track(2, {"a", "b"}).ok());
  EXPECT_TRUE(t.OnAck("a", Ok(2), D(2)).empty());
  EXPECT_TRUE(t.OnAck("b", Ok(2), D(2)).empty());  // seq 2 is ready but seq 1 is not
  EXPECT_TRUE(t.OnAck("a", Ok(1), D(1)).empty());
  auto ds = t.OnAck("b", Ok(1), D(1));
  ASSERT_EQ(ds.size(), 2u);
  EXPECT_EQ(ds[0].seq, 1u);
  EXPECT_EQ(ds[1].seq, 2u);
  EXPECT_EQ(ds[0].digest, D(1));
  EXPECT_TRUE(ds[0].divergent.empty());
  EXPECT_EQ(t.pending(), 0u);
}

TEST(CommitTrackerTest, ForgetUnblocksAndKeepsAnAckThatArrived) {
  CommitTracker t(CommitPolicy::kAll);
  ASSERT_TRUE(t.Track(1, {"a", "b", "c"}).ok());
  EXPECT_TRUE(t.OnAck("a", Ok(1), D(1)).empty());
  EXPECT_TRUE(t.Forget("a").empty());  // a acked: its ack still counts
  EXPECT_TRUE(t.OnAck("b", Ok(1), D(1)).empty());
  auto ds = t.Forget("c");
  ASSERT_EQ(ds.size(), 1u);
  EXPECT_EQ(ds[0].result.rows_changed, 1);
  EXPECT_FALSE(ds[0].unacknowledged);
}

TEST(CommitTrackerTest, EveryReplicaDownBeforeAckingIsUnacknowledged) {
  CommitTracker t(CommitPolicy::kAll);
  ASSERT_TRUE(t.Track(5, {"a"}).ok());
  auto ds = t.Forget("a");
  ASSERT_EQ(ds.size(), 1u);
  EXPECT_TRUE(ds[0].unacknowledged);
  EXPECT_EQ(ds[0].result.code, -1);
  EXPECT_EQ(ds[0].seq, 5u);
}

TEST(CommitTrackerTest, MajorityOutcomeWinsAndDissentersAreReportedOnce) {
  CommitTracker t(CommitPolicy::kAll);
  ASSERT_TRUE(t.Track(1, {"a", "b", "c"}).ok());
  EntryResult failed = Ok(1, 0);
  failed.code = 19;
  failed.error = "UNIQUE constraint failed: t.id";
  t.OnAck("a", failed, D(9));
  t.OnAck("b", Ok(1), D(1));
  t.OnAck("b", failed, D(9));  // a duplicate ack is ignored
  auto ds = t.OnAck("c", Ok(1), D(1));
  ASSERT_EQ(ds.size(), 1u);
  EXPECT_EQ(ds[0].result.code, 0);
  EXPECT_EQ(ds[0].result.rows_changed, 1);
  EXPECT_EQ(ds[0].digest, D(1));
  EXPECT_EQ(ds[0].divergent, std::vector<std::string>{"a"});
}

TEST(CommitTrackerTest, TieGoesToTheFirstAckAndDigestAloneDiverges) {
  CommitTracker t(CommitPolicy::kAll);
  ASSERT_TRUE(t.Track(1, {"a", "b"}).ok());
  t.OnAck("b", Ok(1), D(7));
  auto ds = t.OnAck("a", Ok(1), D(8));  // same outcome, different digest
  ASSERT_EQ(ds.size(), 1u);
  EXPECT_EQ(ds[0].digest, D(7));
  EXPECT_EQ(ds[0].divergent, std::vector<std::string>{"a"});
}

TEST(CommitTrackerTest, MajorityAndOneDecideEarlyAndCompareLateAcks) {
  CommitTracker m(CommitPolicy::kMajority);
  ASSERT_TRUE(m.Track(1, {"a", "b", "c"}).ok());
  EXPECT_TRUE(m.OnAck("a", Ok(1), D(1)).empty());
  auto ds = m.OnAck("b", Ok(1), D(1));
  ASSERT_EQ(ds.size(), 1u);
  EXPECT_TRUE(m.TakeLateDivergences().empty());
  EXPECT_TRUE(m.OnAck("c", Ok(1, 2), D(3)).empty());
  EXPECT_EQ(m.TakeLateDivergences(), (std::vector<LateDivergence>{{1, "c"}}));
  EXPECT_TRUE(m.TakeLateDivergences().empty());
  EXPECT_TRUE(m.OnAck("c", Ok(1, 2), D(3)).empty());  // reported once
  EXPECT_TRUE(m.TakeLateDivergences().empty());

  CommitTracker o(CommitPolicy::kOne);
  ASSERT_TRUE(o.Track(1, {"a", "b"}).ok());
  ASSERT_EQ(o.OnAck("b", Ok(1), D(1)).size(), 1u);
  o.OnAck("a", Ok(1), D(1));  // agrees
  EXPECT_TRUE(o.TakeLateDivergences().empty());
}

TEST(CommitTrackerTest, AcksFromOutsideTheSetAndUnknownSeqsAreIgnored) {
  CommitTracker t(CommitPolicy::kOne);
  ASSERT_TRUE(t.Track(1, {"a"}).ok());
  EXPECT_TRUE(t.OnAck("z", Ok(1), D(1)).empty());
  EXPECT_TRUE(t.OnAck("a", Ok(9), D(1)).empty());
  EXPECT_EQ(t.pending(), 1u);
  EXPECT_EQ(t.Track(1, {"a"}).code(), Code::kInvalidArgument);
}

// Property: whatever the order of acks and failures, decisions come out once each, in seq order,
// and only when the policy is met.
TEST(CommitTrackerTest, RandomAckOrdersDecideEveryEntryOnceInOrder) {
  for (auto policy : {CommitPolicy::kAll, CommitPolicy::kMajority, CommitPolicy::kOne}) {
    Random rng(static_cast<uint64_t>(policy) + 100);
    for (int round = 0; round < 200; ++round) {
      CommitTracker t(policy);
      const std::vector<std::string> names = {"a", "b", "c", "d", "e"};
      const uint64_t n = 1 + rng.Uniform(20);
      std::vector<std::pair<uint64_t, std::string>> events;  // (seq, replica); seq 0 = Forget
      for (uint64_t s = 1; s <= n; ++s) {
        ASSERT_TRUE(t.Track(s, {names.begin(), names.end()}).ok());
        for (const auto& r : names) events.push_back({s, r});
      }
      for (int k = 0; k < 2; ++k) events.push_back({0, names[rng.Uniform(names.size())]});
      for (size_t i = events.size(); i > 1; --i) std::swap(events[i - 1], events[rng.Uniform(i)]);
      std::set<std::string> down;
      uint64_t next = 1;
      for (const auto& [s, r] : events) {
        std::vector<Decision> ds;
        if (s == 0) {
          down.insert(r);
          ds = t.Forget(r);
        } else if (down.count(r) == 0) {
          ds = t.OnAck(r, Ok(s), D(static_cast<uint8_t>(s)));
        }
        for (const auto& d : ds) {
          ASSERT_EQ(d.seq, next);
          ++next;
          EXPECT_TRUE(d.divergent.empty());
          EXPECT_FALSE(d.unacknowledged);
        }
      }
      EXPECT_EQ(next, n + 1);
      EXPECT_EQ(t.pending(), 0u);
    }
  }
}

}  // namespace
}  // namespace vsc::replication
