#include "director/verify_tracker.h"

#include <gtest/gtest.h>

namespace vsc::director {
namespace {

const TimePoint kT0 = TimePoint(std::chrono::seconds(100));

std::map<std::string, std::string> Statuses(const VerifyReport& r) {
  std::map<std::string, std::string> out;
  for (const VerifyReplica& v : r.replicas) out[v.id] = v.status;
  return out;
}

TEST(VerifyTrackerTest, CompleteAndOkWhenEveryExpectedReplicaMatchesTheAgreedChecksum) {
  VerifyTracker t;
  t.Start(7, kT0, {"a", "b", "c"}, {});
  t.OnChecksum(7, "a", "x");
  t.OnChecksum(7, "b", "x");
  auto r = t.Report(7, kT0 + std::chrono::milliseconds(5));
  ASSERT_TRUE(r.has_value());
  EXPECT_FALSE(r->complete);
  EXPECT_FALSE(r->ok);
  EXPECT_EQ(Statuses(*r).at("c"), "PENDING");
  EXPECT_DOUBLE_EQ(r->elapsed_ms, 5);
  t.OnChecksum(7, "c", "x");
  t.OnDecided(7, "x");
  r = t.Report(7, kT0);
  EXPECT_TRUE(r->complete);
  EXPECT_TRUE(r->ok);
  EXPECT_EQ(r->expected, "x");
  EXPECT_EQ(t.last_seq(), 7u);
}

TEST(VerifyTrackerTest, MismatchAgainstTheDecisionOrTheMajority) {
  VerifyTracker t;
  t.Start(3, kT0, {"a", "b", "c"}, {});
  t.OnChecksum(3, "a", "y");
  t.OnChecksum(3, "b", "y");
  t.OnChecksum(3, "c", "z");
  auto r = t.Report(3, kT0);
  EXPECT_EQ(r->expected, "y");  // not decided yet: the majority
  EXPECT_EQ(Statuses(*r).at("c"), "MISMATCH");
  EXPECT_TRUE(r->complete);
  EXPECT_FALSE(r->ok);
  t.OnDecided(3, "z");  // the decision wins over the majority
  r = t.Report(3, kT0);
  EXPECT_EQ(Statuses(*r).at("a"), "MISMATCH");
  EXPECT_EQ(Statuses(*r).at("c"), "OK");
}

TEST(VerifyTrackerTest, LostTimeoutAndSkippedReplicasMakeItNotOk) {
  VerifyTracker t(32, std::chrono::seconds(30));
  t.Start(5, kT0, {"a", "b", "c"}, {{"d", "DIVERGED"}});
  t.OnChecksum(5, "a", "x");
  t.OnLost("b");
  t.OnLost("a");  // already answered: stays OK
  t.Tick(kT0 + std::chrono::seconds(29));
  auto r = t.Report(5, kT0);
  EXPECT_FALSE(r->complete);
  EXPECT_EQ(Statuses(*r).at("c"), "PENDING");
  t.Tick(kT0 + std::chrono::seconds(30));
  r = t.Report(5, kT0);
  EXPECT_TRUE(r->complete);
  EXPECT_FALSE(r->ok);
  const auto st = Statuses(*r);
  EXPECT_EQ(st.at("a"), "OK");
  EXPECT_EQ(st.at("b"), "LOST");
  EXPECT_EQ(st.at("c"), "TIMEOUT");
  EXPECT_EQ(st.at("d"), "SKIPPED (DIVERGED)");
}

TEST(VerifyTrackerTest, KeepsTheLastRunsAndIgnoresUnknownSeqs) {
  VerifyTracker t(2);
  t.Start(1, kT0, {"a"}, {});
  t.Start(2, kT0, {"a"}, {});
  t.Start(3, kT0, {"a"}, {});
  EXPECT_FALSE(t.Report(1, kT0).has_value());
  EXPECT_TRUE(t.Report(2, kT0).has_value());
  t.OnChecksum(9, "a", "x");  // no such run
  t.OnDecided(9, "x");
  EXPECT_FALSE(t.Report(9, kT0).has_value());
  auto none = t.Report(3, kT0);
  EXPECT_FALSE(none->ok);
  VerifyTracker empty;
  empty.Start(4, kT0, {}, {});
  EXPECT_FALSE(empty.Report(4, kT0)->ok) << "a run with no replica proves nothing";
}

}  // namespace
}  // namespace vsc::director
