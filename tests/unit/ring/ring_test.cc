#include "ring/ring.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "ring_test_util.h"

namespace vsc::ring {
namespace {

using testing::BrutePredecessor;
using testing::BruteSuccessor;
using testing::ProbeKeys;
using testing::RandomRing;
using testing::SeededRandom;

NodeSpec Node(std::string name, uint16_t port = 7000) {
  return NodeSpec{std::move(name), Endpoint{"127.0.0.1", port}};
}

TEST(RingTest, BuildSortsByTheHashOfTheNameAndKeepsEverything) {
  auto ring = Ring::Build(42, {Node("rs1", 7001), Node("rs2", 7002), Node("rs3", 7003)});
  ASSERT_TRUE(ring.ok()) << ring.status().ToString();
  EXPECT_EQ(ring->version(), 42u);
  ASSERT_EQ(ring->size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    const Member& m = ring->member(i);
    EXPECT_EQ(m.id, NodeId(m.name));
    EXPECT_EQ(m.endpoint.port, 7000 + (m.name.back() - '0'));
    if (i > 0) {
      EXPECT_LT(ring->member(i - 1).id, m.id);
    }
    EXPECT_EQ(ring->IndexOf(m.name), i);
  }
  EXPECT_EQ(ring->IndexOf("rs4"), 3u);
  EXPECT_EQ(ring->IndexOf(""), 3u);
  // The input order does not matter.
  auto again = Ring::Build(42, {Node("rs3", 7003), Node("rs1", 7001), Node("rs2", 7002)});
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *ring);
}

TEST(RingTest, BuildRefusesAmbiguousOrMalformedMembersByName) {
  auto msg = [](std::vector<NodeSpec> nodes) {
    auto r = Ring::Build(1, std::move(nodes));
    EXPECT_FALSE(r.ok());
    return r.ok() ? std::string() : r.status().message();
  };
  EXPECT_EQ(msg({Node("rs1"), Node("rs2"), Node("rs1", 9)}),
            "ring: node \"rs1\" is listed twice; each node needs a unique name");
  EXPECT_EQ(msg({Node("")}), "ring: a node has an empty name; name every node");
  EXPECT_EQ(msg({Node(std::string(65, 'n'))}),
            "ring: node name \"nnnnnnnnnnnnnnnn...\" is 65 bytes, over the limit of 64; use a "
            "shorter name");
  EXPECT_EQ(msg({Node("rs1", 0)}), "ring: node \"rs1\" has port 0; give the port it listens on");
  EXPECT_EQ(msg({NodeSpec{"rs1", Endpoint{"", 1}}}),
            "ring: node \"rs1\" has a host of 0 bytes; give 1 to 253");
  EXPECT_EQ(msg({NodeSpec{"rs1", Endpoint{std::string(254, 'h'), 1}}}),
            "ring: node \"rs1\" has a host of 254 bytes; give 1 to 253");
  std::vector<NodeSpec> many;
  for (size_t i = 0; i <= kMaxMembers; ++i) many.push_back(Node("n" + std::to_string(i)));
  EXPECT_EQ(msg(many), "ring: 16385 nodes, over the limit of 16384");
  many.pop_back();
  EXPECT_TRUE(Ring::Build(1, many).ok());
  // The limits themselves are accepted.
  EXPECT_TRUE(
      Ring::Build(1, {NodeSpec{std::string(64, 'n'), Endpoint{std::string(253, 'h'), 65535}}})
          .ok());
}

TEST(RingTest, EmptyRingHasNoSuccessorList) {
  Ring empty;
  EXPECT_TRUE(empty.empty());
  EXPECT_EQ(empty.version(), 0u);
  EXPECT_TRUE(empty.SuccessorList(123).empty());
  EXPECT_EQ(empty.IndexOf("rs1"), 0u);
  EXPECT_DEATH((void)empty.Successor(1), "empty ring");
}

TEST(RingTest, SuccessorAndPredecessorMatchBruteForceOnRandomRings) {
  Random rng = SeededRandom(202);
  for (size_t n : {1, 2, 3, 10, 100, 1000, 10000}) {
    SCOPED_TRACE("N = " + std::to_string(n));
    const Ring ring = RandomRing(rng, n);
    ASSERT_EQ(ring.size(), n);
    size_t failures = 0;
    for (RingId k : ProbeKeys(rng, ring, 1000)) {
      failures += ring.SuccessorIndex(k) != BruteSuccessor(ring, k);
      failures += ring.PredecessorIndex(k) != BrutePredecessor(ring, k);
    }
    EXPECT_EQ(failures, 0u);
  }
}

TEST(RingTest, EachMemberOwnsTheArcFromItsPredecessor) {
  Random rng = SeededRandom(203);
  const Ring ring = RandomRing(rng, 50);
  for (size_t i = 0; i < ring.size(); ++i) {
    const RingId id = ring.member(i).id;
    const RingId pred = ring.member(ring.PredecessorIndex(id)).id;
    EXPECT_EQ(ring.SuccessorIndex(id), i);
    EXPECT_EQ(ring.SuccessorIndex(pred + 1), i);
    EXPECT_NE(ring.SuccessorIndex(id + 1), i);
  }
  const Member& owner = ring.Owner("group-17");
  EXPECT_EQ(owner, ring.member(BruteSuccessor(ring, KeyId("group-17"))));
}

TEST(RingTest, ArcSharesAreTheArcsFromEachPredecessorAndSumToOne) {
  Random rng = SeededRandom(204);
  const Ring ring = RandomRing(rng, 40);
  double sum = 0;
  for (size_t i = 0; i < ring.size(); ++i) {
    const RingId pred = ring.member((i + ring.size() - 1) % ring.size()).id;
    EXPECT_DOUBLE_EQ(ring.ArcShare(i), static_cast<double>(ring.member(i).id - pred) / 0x1p64);
    sum += ring.ArcShare(i);
  }
  EXPECT_NEAR(sum, 1.0, 1e-9);
  EXPECT_EQ(std::move(Ring::Build(1, {Node("alone")})).value().ArcShare(0), 1.0);
}

TEST(RingTest, SuccessorListIsTheNextDistinctMembersClockwise) {
  Random rng = SeededRandom(204);
  for (size_t n : {1, 2, 3, 4, 10, 1000}) {
    SCOPED_TRACE("N = " + std::to_string(n));
    const Ring ring = RandomRing(rng, n);
    for (RingId k : ProbeKeys(rng, ring, 200)) {
      for (size_t r : {size_t{1}, kReplicas, size_t{5}}) {
        const std::vector<size_t> list = ring.SuccessorList(k, r);
        ASSERT_EQ(list.size(), std::min(r, n));
        EXPECT_EQ(list[0], BruteSuccessor(ring, k));
        for (size_t j = 1; j < list.size(); ++j) {
          EXPECT_EQ(list[j], BruteSuccessor(ring, ring.member(list[j - 1]).id + 1));
        }
        EXPECT_EQ(std::set<size_t>(list.begin(), list.end()).size(), list.size());
      }
    }
  }
}

}  // namespace
}  // namespace vsc::ring
