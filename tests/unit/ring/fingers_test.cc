#include "ring/fingers.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>

#include "ring_test_util.h"

namespace vsc::ring {
namespace {

using testing::BruteSuccessor;
using testing::ProbeKeys;
using testing::RandomRing;
using testing::SeededRandom;

// Member indices to examine: all of a small ring, a random sample of a large one.
std::vector<size_t> SomeNodes(Random& rng, const Ring& ring, size_t at_most) {
  std::vector<size_t> nodes;
  for (size_t i = 0; i < ring.size() && i < at_most; ++i) {
    nodes.push_back(ring.size() <= at_most ? i : rng.Uniform(ring.size()));
  }
  return nodes;
}

TEST(FingerTableTest, FingerIIsTheSuccessorOfNPlusTwoToTheI) {
  Random rng = SeededRandom(301);
  for (size_t n : {1, 2, 3, 10, 100, 10000}) {
    SCOPED_TRACE("N = " + std::to_string(n));
    const Ring ring = RandomRing(rng, n);
    for (size_t node : SomeNodes(rng, ring, 20)) {
      const FingerTable f(ring, node);
      const RingId id = ring.member(node).id;
      EXPECT_EQ(f.node(), node);
      EXPECT_EQ(f.node_id(), id);
      for (int i = 0; i < kFingerCount; ++i) {
        const RingId start = id + (uint64_t{1} << i);
        EXPECT_EQ(f.start(i), start);
        ASSERT_EQ(f.finger(i), BruteSuccessor(ring, start)) << "finger " << i;
        EXPECT_EQ(f.finger_id(i), ring.member(f.finger(i)).id);
      }
      // finger[0] is the immediate successor (the node itself on a ring of one).
      EXPECT_EQ(f.finger(0), (node + 1) % n);
    }
  }
}

TEST(FingerTableTest, ClosestPrecedingFingerMatchesBruteForce) {
  Random rng = SeededRandom(302);
  for (size_t n : {1, 2, 3, 10, 1000}) {
    SCOPED_TRACE("N = " + std::to_string(n));
    const Ring ring = RandomRing(rng, n);
    for (size_t node : SomeNodes(rng, ring, 10)) {
      const FingerTable f(ring, node);
      const RingId id = ring.member(node).id;
      for (RingId k : ProbeKeys(rng, ring, 300)) {
        // Of the members the fingers name, the one in (n, k) farthest from n; else n itself.
        size_t want = node;
        for (int i = 0; i < kFingerCount; ++i) {
          const size_t s = BruteSuccessor(ring, id + (uint64_t{1} << i));
          if (InOpen(ring.member(s).id, id, k) &&
              (want == node ||
               Distance(id, ring.member(s).id) > Distance(id, ring.member(want).id))) {
            want = s;
          }
        }
        ASSERT_EQ(f.ClosestPrecedingFinger(k), want) << "key " << IdHex(k);
      }
    }
  }
}

TEST(FingerTableTest, OnlyAboutLog2NFingersAreDistinct) {
  Random rng = SeededRandom(303);
  for (size_t n : {10, 100, 1000, 10000}) {
    const Ring ring = RandomRing(rng, n);
    double sum = 0;
    for (size_t i = 0; i < n; ++i) sum += FingerTable(ring, i).DistinctCount();
    const double mean = sum / n;
    const double log2n = std::log2(static_cast<double>(n));
    std::printf("[ MEASURED ] N=%zu distinct fingers: mean %.2f, log2 N = %.2f\n", n, mean, log2n);
    // Measured: log2 N + 0.2 to + 0.35 for N = 10 to 10,000 (seed 303).
    EXPECT_NEAR(mean, log2n + 0.3, 0.7);
  }
  // On a ring of one every finger is the node itself.
  EXPECT_EQ(FingerTable(RandomRing(rng, 1), 0).DistinctCount(), 1u);
}

}  // namespace
}  // namespace vsc::ring
