#include "director/digest_follower.h"

#include <gtest/gtest.h>

#include <string>

namespace vsc::director {
namespace {

using replication::Digest;
using replication::Entry;
using replication::EntryResult;

Entry At(uint64_t seq) {
  Entry e;
  e.epoch = 1;
  e.seq = seq;
  e.ts_micros = 1000 + static_cast<int64_t>(seq);
  e.statements.push_back({"UPDATE t SET v=v+1", {}});
  return e;
}

EntryResult Outcome(uint64_t seq, int code, int64_t rows, const std::string& error = "") {
  EntryResult r;
  r.seq = seq;
  r.code = code;
  r.rows_changed = rows;
  r.error = error;
  return r;
}

TEST(DigestFollowerTest, StepIsTheChainAndIsSharedByReplicasThatAgree) {
  DigestFollower f;
  const Digest zero{};
  const Entry e = At(1);
  const EntryResult ok = Outcome(1, 0, 1);
  const Digest d1 = f.Step(zero, e, ok);
  EXPECT_EQ(d1, replication::NextDigest(zero, e, ok));
  EXPECT_EQ(f.Step(zero, e, ok), d1);
  EXPECT_EQ(f.memoized_seqs(), 1u);
  // Another outcome, or another previous digest, is another step.
  const EntryResult failed = Outcome(1, 19, 0, "constraint failed");
  EXPECT_EQ(f.Step(zero, e, failed), replication::NextDigest(zero, e, failed));
  EXPECT_NE(f.Step(zero, e, failed), d1);
  EXPECT_EQ(f.Step(d1, e, ok), replication::NextDigest(d1, e, ok));
  f.Step(d1, At(2), Outcome(2, 0, 1));
  f.ForgetSteps(1);
  EXPECT_EQ(f.memoized_seqs(), 1u);
}

TEST(DigestFollowerTest, AgreedDigestsRunInSeqOrderAndAJumpStartsANewRun) {
  DigestFollower f(3);
  EXPECT_FALSE(f.LatestAgreed().has_value());
  Digest d{};
  for (uint64_t seq = 10; seq <= 13; ++seq) {
    d[0] = static_cast<uint8_t>(seq);
    f.RecordAgreed(seq, d);
  }
  EXPECT_FALSE(f.AgreedAt(10).has_value()) << "only the last 3 are kept";
  ASSERT_TRUE(f.AgreedAt(11).has_value());
  EXPECT_EQ((*f.AgreedAt(11))[0], 11);
  EXPECT_EQ((*f.AgreedAt(13))[0], 13);
  EXPECT_FALSE(f.AgreedAt(14).has_value());
  d[0] = 20;
  f.RecordAgreed(20, d);  // a jump
  EXPECT_FALSE(f.AgreedAt(13).has_value());
  ASSERT_TRUE(f.LatestAgreed().has_value());
  EXPECT_EQ(f.LatestAgreed()->first, 20u);
  EXPECT_EQ(f.LatestAgreed()->second[0], 20);
}

}  // namespace
}  // namespace vsc::director
