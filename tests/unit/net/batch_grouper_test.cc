// BatchGrouper: one group per key, keys in first-appearance order, each key's datagrams in
// arrival order; Clear starts a fresh batch.
#include "net/batch_grouper.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace vsc::net {
namespace {

using Groups = std::vector<std::pair<int, std::vector<uint32_t>>>;

Groups Collect(BatchGrouper<int>& g) {
  Groups out;
  g.ForEach([&](const int& key, std::span<const uint32_t> idx) {
    out.emplace_back(key, std::vector<uint32_t>(idx.begin(), idx.end()));
  });
  return out;
}

TEST(BatchGrouperTest, InterleavedKeysGroupInFirstAppearanceOrderKeepingArrivalOrder) {
  BatchGrouper<int> g;
  const int keys[] = {7, 3, 7, 9, 3, 7};
  for (uint32_t i = 0; i < 6; ++i) g.Add(keys[i], i);
  EXPECT_EQ(g.size(), 6u);
  EXPECT_EQ(g.groups(), 3u);
  EXPECT_EQ(Collect(g), (Groups{{7, {0, 2, 5}}, {3, {1, 4}}, {9, {3}}}));
}

TEST(BatchGrouperTest, EveryDatagramItsOwnKeyGivesOneGroupEach) {
  BatchGrouper<int> g;
  for (uint32_t i = 0; i < 32; ++i) g.Add(100 + static_cast<int>(i), i);
  Groups got = Collect(g);
  ASSERT_EQ(got.size(), 32u);
  for (uint32_t i = 0; i < 32; ++i)
    EXPECT_EQ(got[i], (std::pair<int, std::vector<uint32_t>>{100 + static_cast<int>(i), {i}}));
}

TEST(BatchGrouperTest, OneKeyGivesOneGroupOfAll) {
  BatchGrouper<int> g;
  for (uint32_t i = 0; i < 5; ++i) g.Add(1, i);
  EXPECT_EQ(Collect(g), (Groups{{1, {0, 1, 2, 3, 4}}}));
}

TEST(BatchGrouperTest, SkippedIndicesStayOutAndClearStartsAFreshBatch) {
  BatchGrouper<int> g;
  g.Add(1, 0);
  g.Add(2, 3);  // datagrams 1 and 2 were refused: never added
  g.Add(1, 4);
  EXPECT_EQ(Collect(g), (Groups{{1, {0, 4}}, {2, {3}}}));
  g.Clear();
  EXPECT_EQ(g.size(), 0u);
  EXPECT_TRUE(Collect(g).empty());
  g.Add(2, 0);
  g.Add(5, 1);
  EXPECT_EQ(Collect(g), (Groups{{2, {0}}, {5, {1}}}));
}

TEST(BatchGrouperTest, ForEachTwiceGivesTheSameGroups) {
  BatchGrouper<int> g;
  const int keys[] = {4, 4, 2, 4, 2};
  for (uint32_t i = 0; i < 5; ++i) g.Add(keys[i], i);
  const Groups first = Collect(g);
  EXPECT_EQ(Collect(g), first);
  EXPECT_EQ(first, (Groups{{4, {0, 1, 3}}, {2, {2, 4}}}));
}

}  // namespace
}  // namespace vsc::net
