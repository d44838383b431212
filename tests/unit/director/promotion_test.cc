// ChooseHead's two steps (promotion, issue 11): the head is the highest position any replica
// reports, with the digest most replicas at it hold; the log is kept only when it holds that
// head with the same agreed digest.
#include "director/promotion.h"

#include <gtest/gtest.h>

#include "replication/digest.h"

namespace vsc::director {
namespace {

replication::Digest D(uint8_t b) {
  replication::Digest d{};
  d.fill(b);
  return d;
}

TEST(PromotionTest, TheHeadIsTheHighestPositionAnyReplicaReports) {
  EXPECT_FALSE(PickHead({}).has_value());
  auto h = PickHead({{"rs1", 7, D(1), true}, {"rs2", 9, D(2), true}, {"rs3", 3, D(3), true}});
  ASSERT_TRUE(h.has_value());
  EXPECT_EQ(h->seq, 9u);
  EXPECT_EQ(h->digest, D(2));
  EXPECT_EQ(h->source, "rs2");
}

TEST(PromotionTest, AtTheHeadTheDigestMostReplicasHoldWinsAndTiesGoToTheSmallestId) {
  auto h = PickHead({{"rs1", 9, D(1), true}, {"rs2", 9, D(2), true}, {"rs3", 9, D(2), true}});
  ASSERT_TRUE(h.has_value());
  EXPECT_EQ(h->digest, D(2));
  EXPECT_EQ(h->source, "rs2");
  auto tie = PickHead({{"rs4", 9, D(4), true}, {"rs2", 9, D(2), true}});
  ASSERT_TRUE(tie.has_value());
  EXPECT_EQ(tie->source, "rs2");
  EXPECT_EQ(tie->digest, D(2));
}

TEST(PromotionTest, TheSourceIsAReplicaThatSentItsSchema) {
  auto h = PickHead({{"rs1", 9, D(1), false}, {"rs2", 9, D(1), true}});
  ASSERT_TRUE(h.has_value());
  EXPECT_EQ(h->source, "rs2");
}

TEST(PromotionTest, TheLogIsKeptOnlyWhenItHoldsTheHeadWithTheSameAgreedDigest) {
  HeadChoice head{9, D(2), "rs2", false, ""};
  EXPECT_FALSE(DecideRebase(head, 12, D(2)).rebase) << "this log sequenced the head itself";
  EXPECT_TRUE(DecideRebase(head, 12, D(3)).rebase) << "another history at seq 9";
  EXPECT_TRUE(DecideRebase(head, 12, std::nullopt).rebase) << "not known to agree";
  EXPECT_TRUE(DecideRebase(head, 5, std::nullopt).rebase) << "the log ends before the head";
  const HeadChoice beyond = DecideRebase(head, 12, std::nullopt);
  EXPECT_NE(beyond.reason.find("seq 10..12 were applied by no replica"), std::string::npos)
      << beyond.reason;
  // Every history starts from the same bootstrap: at seq 0 the log is always a superset.
  HeadChoice zero{0, replication::ZeroDigest(), "rs1", false, ""};
  EXPECT_FALSE(DecideRebase(zero, 0, std::nullopt).rebase);
  EXPECT_FALSE(DecideRebase(zero, 4, std::nullopt).rebase);
}

}  // namespace
}  // namespace vsc::director
