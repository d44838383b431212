#include "relay/group_table.h"

#include <gtest/gtest.h>

#include "clip_fixtures.h"

namespace vsc::relay {
namespace {

ClipBytes OneByte(uint8_t v) { return std::make_shared<const std::vector<uint8_t>>(1, v); }

using testing_util::Seqs;

GroupLimits Limits(size_t groups = 10, size_t subscribers = 10) {
  GroupLimits l;
  l.max_groups = groups;
  l.max_subscribers = subscribers;
  return l;
}

TEST(GroupTableTest, ClipsBecomeVisibleOnlyWhenCommittedAndInSeqOrder) {
  GroupTable t(Limits());
  ASSERT_EQ(*t.Append("g", OneByte(1)), 1u);
  ASSERT_EQ(*t.Append("g", OneByte(2)), 2u);
  ASSERT_EQ(*t.Append("g", OneByte(3)), 3u);
  EXPECT_TRUE(t.Fetch("g", 0, 10).empty());  // nothing committed: nothing to see
  EXPECT_TRUE(t.Commit("g", 2).empty());     // 2 waits for 1
  EXPECT_TRUE(t.Fetch("g", 0, 10).empty());
  EXPECT_EQ(Seqs(t.Commit("g", 1)), (std::vector<uint64_t>{1, 2}));
  EXPECT_EQ(Seqs(t.Fetch("g", 0, 10)), (std::vector<uint64_t>{1, 2}));
  EXPECT_EQ(t.Visible("g"), 2u);
  EXPECT_EQ(Seqs(t.Commit("g", 3)), (std::vector<uint64_t>{3}));
  EXPECT_TRUE(t.Commit("g", 3).empty());  // once only
}

// What a handoff waits for (Pending) and what restoring copies sends (Held).
TEST(GroupTableTest, PendingUntilEveryAppendIsCommittedAndHeldIncludesThePending) {
  GroupTable t(Limits());
  EXPECT_FALSE(t.Pending("g"));
  EXPECT_TRUE(t.Held("g").empty());
  ASSERT_EQ(*t.Append("g", OneByte(1)), 1u);
  EXPECT_TRUE(t.Pending("g"));
  ASSERT_EQ(*t.Append("g", OneByte(2)), 2u);
  EXPECT_TRUE(t.Pending("g"));
  EXPECT_EQ(Seqs(t.Held("g")), (std::vector<uint64_t>{1, 2}));
  t.Commit("g", 2);
  EXPECT_TRUE(t.Pending("g"));  // 2 is committed, 1 is not: neither is visible
  t.Commit("g", 1);
  EXPECT_FALSE(t.Pending("g"));
  EXPECT_TRUE(*t.Insert("h", 7, OneByte(7)));  // a copy is never pending
  EXPECT_FALSE(t.Pending("h"));
  EXPECT_EQ(Seqs(t.Held("h")), (std::vector<uint64_t>{7}));
}

TEST(GroupTableTest, CopiesAreVisibleAtOnceAndDuplicatesIgnored) {
  GroupTable t(Limits());
  EXPECT_TRUE(*t.Insert("g", 5, OneByte(5)));
  EXPECT_FALSE(*t.Insert("g", 5, OneByte(5)));
  EXPECT_EQ(t.Visible("g"), 5u);
  EXPECT_EQ(Seqs(t.Fetch("g", 0, 10)), (std::vector<uint64_t>{5}));
  // The copy holder takes over: its own appends continue after the copies.
  ASSERT_EQ(*t.Append("g", OneByte(6)), 6u);
  EXPECT_EQ(Seqs(t.Commit("g", 6)), (std::vector<uint64_t>{6}));
}

TEST(GroupTableTest, GroupAndSubscriberBoundsRefuseWithTheReason) {
  GroupTable t(Limits(2, 1));
  ASSERT_TRUE(t.Append("a", OneByte(1)).ok());
  ASSERT_TRUE(t.Subscribe("b", 1).ok());
  auto third = t.Append("c", OneByte(1));
  ASSERT_FALSE(third.ok());
  EXPECT_EQ(third.status().code(), Code::kResourceExhausted);
  EXPECT_NE(third.status().message().find("maximum of 2 groups"), std::string::npos);
  Status second = t.Subscribe("b", 2);
  EXPECT_EQ(second.code(), Code::kResourceExhausted);
  EXPECT_NE(second.message().find("maximum of 1 subscribers"), std::string::npos);
  // A group without clips is forgotten with its last subscriber, which frees its place.
  t.Unsubscribe("b", 1);
  EXPECT_TRUE(t.Append("c", OneByte(1)).ok());
  EXPECT_EQ(t.Groups(), (std::vector<std::string>{"a", "c"}));
}

TEST(GroupTableTest, FetchSaysWhenTheBufferDroppedClips) {
  GroupLimits l = Limits();
  l.buffer.max_clips = 2;
  GroupTable t(l);
  for (int i = 0; i < 4; ++i) t.Commit("g", *t.Append("g", OneByte(1)));
  bool gone = false;
  EXPECT_EQ(Seqs(t.Fetch("g", 0, 10, &gone)), (std::vector<uint64_t>{3, 4}));
  EXPECT_TRUE(gone);
  EXPECT_EQ(Seqs(t.Fetch("g", 2, 10, &gone)), (std::vector<uint64_t>{3, 4}));
  EXPECT_FALSE(gone);
  EXPECT_EQ(t.Subscribers("g"), std::vector<SubscriberId>{});
}

}  // namespace
}  // namespace vsc::relay
