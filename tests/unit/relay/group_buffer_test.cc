#include "relay/group_buffer.h"

#include <gtest/gtest.h>

#include <random>

#include "clip_fixtures.h"

namespace vsc::relay {
namespace {

ClipBytes Bytes(size_t n, uint8_t fill = 0) {
  return std::make_shared<const std::vector<uint8_t>>(n, fill);
}

using testing_util::Seqs;

TEST(GroupBufferTest, AppendNumbersFromOneAndSinceReturnsWhatFollows) {
  GroupBuffer b({10, 1 << 20});
  for (uint64_t i = 1; i <= 5; ++i) EXPECT_EQ(b.Append(Bytes(10)), i);
  EXPECT_EQ(Seqs(b.Since(0, 100)), (std::vector<uint64_t>{1, 2, 3, 4, 5}));
  EXPECT_EQ(Seqs(b.Since(3, 100)), (std::vector<uint64_t>{4, 5}));
  EXPECT_EQ(Seqs(b.Since(1, 2)), (std::vector<uint64_t>{2, 3}));
  EXPECT_TRUE(b.Since(5, 100).empty());
  EXPECT_FALSE(b.Gone(0));
}

TEST(GroupBufferTest, CountAndByteBoundsDropTheOldestAndGoneSaysSo) {
  GroupBuffer by_count({3, 1 << 20});
  for (int i = 0; i < 5; ++i) by_count.Append(Bytes(10));
  EXPECT_EQ(by_count.size(), 3u);
  EXPECT_EQ(by_count.first_seq(), 3u);
  EXPECT_TRUE(by_count.Gone(0));
  EXPECT_TRUE(by_count.Gone(1));
  EXPECT_FALSE(by_count.Gone(2));  // 3.. are all still held
  EXPECT_FALSE(by_count.Gone(5));

  GroupBuffer by_bytes({100, 25});
  for (int i = 0; i < 4; ++i) by_bytes.Append(Bytes(10));
  EXPECT_EQ(by_bytes.size(), 2u);
  EXPECT_EQ(by_bytes.bytes(), 20u);
  by_bytes.Append(Bytes(100));  // alone over the bound: the newest clip always stays
  EXPECT_EQ(by_bytes.size(), 1u);
  EXPECT_EQ(by_bytes.last_seq(), 5u);
}

TEST(GroupBufferTest, CopiesKeepTheOwnersNumbersAndIgnoreDuplicates) {
  GroupBuffer copy({10, 1 << 20});
  EXPECT_TRUE(copy.Insert(4, Bytes(1)));
  EXPECT_FALSE(copy.Insert(4, Bytes(1)));
  EXPECT_TRUE(copy.Insert(7, Bytes(1)));
  EXPECT_TRUE(copy.Insert(5, Bytes(1)));  // overtaken by 7: stored in its place
  EXPECT_FALSE(copy.Insert(5, Bytes(1)));
  EXPECT_FALSE(copy.Insert(0, Bytes(1)));
  EXPECT_EQ(copy.last_seq(), 7u);
  EXPECT_EQ(copy.Append(Bytes(1)), 8u);  // a copy that takes over continues the numbering
  EXPECT_EQ(Seqs(copy.Since(0, 10)), (std::vector<uint64_t>{4, 5, 7, 8}));
  EXPECT_EQ(Seqs(copy.Since(5, 10)), (std::vector<uint64_t>{7, 8}));
  // Older than everything held: stored in front while the bounds allow (restored copies come
  // after the live ones), refused once they are reached (it would be dropped at once).
  EXPECT_TRUE(copy.Insert(2, Bytes(1)));
  EXPECT_FALSE(copy.Insert(2, Bytes(1)));
  EXPECT_EQ(Seqs(copy.Since(0, 10)), (std::vector<uint64_t>{2, 4, 5, 7, 8}));
  GroupBuffer full({3, 1 << 20});
  for (uint64_t seq : {5, 6, 7}) ASSERT_TRUE(full.Insert(seq, Bytes(1)));
  EXPECT_FALSE(full.Insert(4, Bytes(1)));
  EXPECT_EQ(Seqs(full.Since(0, 10)), (std::vector<uint64_t>{5, 6, 7}));
  GroupBuffer full_bytes({10, 3});
  for (uint64_t seq : {5, 6, 7}) ASSERT_TRUE(full_bytes.Insert(seq, Bytes(1)));
  EXPECT_FALSE(full_bytes.Insert(4, Bytes(1)));
  EXPECT_EQ(full_bytes.size(), 3u);
}

TEST(GroupBufferTest, MatchesAModelUnderRandomOperations) {
  std::mt19937_64 rng(20261201);
  SCOPED_TRACE("seed 20261201");
  GroupBuffer b({16, 4000});
  std::vector<std::pair<uint64_t, size_t>> model;  // every clip ever stored
  for (int op = 0; op < 5000; ++op) {
    const size_t size = rng() % 600;
    if (rng() % 4 == 0) {
      const uint64_t seq = b.last_seq() + 1 + rng() % 3;
      ASSERT_TRUE(b.Insert(seq, Bytes(size)));
      model.push_back({seq, size});
    } else {
      model.push_back({b.Append(Bytes(size)), size});
    }
    // The model's answer: the longest suffix within both bounds (at least one clip).
    size_t keep = 0, bytes = 0;
    while (keep < model.size() && keep < 16) {
      const size_t next = model[model.size() - 1 - keep].second;
      if (keep > 0 && bytes + next > 4000) break;
      bytes += next;
      ++keep;
    }
    ASSERT_EQ(b.size(), keep) << "op " << op;
    ASSERT_EQ(b.bytes(), bytes) << "op " << op;
    const uint64_t since = model[rng() % model.size()].first;
    std::vector<uint64_t> want;
    for (size_t i = model.size() - keep; i < model.size(); ++i) {
      if (model[i].first > since) want.push_back(model[i].first);
    }
    ASSERT_EQ(Seqs(b.Since(since, 100)), want) << "op " << op;
  }
}

}  // namespace
}  // namespace vsc::relay
