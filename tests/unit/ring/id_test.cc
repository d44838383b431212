#include "ring/id.h"

#include <gtest/gtest.h>

#include <vector>

#include "ring_test_util.h"

namespace vsc::ring {
namespace {

TEST(RingIdTest, IdIsTheFirstEightBytesOfSha1BigEndian) {
  // SHA-1("abc") = a9993e36 4706816a ba3e2571 ... (FIPS 180-2 appendix A.1).
  EXPECT_EQ(HashId("abc"), 0xa9993e364706816aULL);
  EXPECT_EQ(HashId(""), 0xda39a3ee5e6b4b0dULL);
  EXPECT_EQ(NodeId("abc"), KeyId("abc"));  // one circle for nodes and keys
  EXPECT_EQ(IdHex(0xa9993e364706816aULL), "0xa9993e364706816a");
  EXPECT_EQ(IdHex(1), "0x0000000000000001");
}

TEST(RingIdTest, DistanceIsClockwiseModulo2To64) {
  EXPECT_EQ(Distance(10, 15), 5u);
  EXPECT_EQ(Distance(15, 10), UINT64_MAX - 4);
  EXPECT_EQ(Distance(UINT64_MAX, 0), 1u);
  EXPECT_EQ(Distance(7, 7), 0u);
}

// The textbook case analysis, written independently of the distance trick.
bool RefOpenClosed(RingId x, RingId a, RingId b) {
  if (a < b) return a < x && x <= b;
  if (a > b) return x > a || x <= b;
  return true;
}
bool RefOpen(RingId x, RingId a, RingId b) {
  if (a < b) return a < x && x < b;
  if (a > b) return x > a || x < b;
  return x != a;
}

TEST(RingIdTest, IntervalsWrapAroundZeroAsTheCaseAnalysisSays) {
  Random rng = testing::SeededRandom(101);
  std::vector<RingId> points = {0, 1, 2, UINT64_MAX, UINT64_MAX - 1, uint64_t{1} << 63};
  for (int i = 0; i < 40; ++i) points.push_back(rng.Next());
  for (RingId a : points) {
    for (RingId b : points) {
      for (RingId x : {a, b, a + 1, a - 1, b + 1, b - 1, RingId{0}, UINT64_MAX, rng.Next()}) {
        EXPECT_EQ(InOpenClosed(x, a, b), RefOpenClosed(x, a, b)) << x << " in (" << a << "," << b;
        EXPECT_EQ(InOpen(x, a, b), RefOpen(x, a, b)) << x << " in (" << a << "," << b;
      }
    }
  }
  // Chord's conventions for equal ends.
  EXPECT_TRUE(InOpenClosed(5, 5, 5));
  EXPECT_FALSE(InOpen(5, 5, 5));
  EXPECT_TRUE(InOpen(6, 5, 5));
  // Wrapping arcs.
  EXPECT_TRUE(InOpenClosed(0, UINT64_MAX - 3, 2));
  EXPECT_TRUE(InOpenClosed(2, UINT64_MAX - 3, 2));
  EXPECT_FALSE(InOpenClosed(3, UINT64_MAX - 3, 2));
  EXPECT_FALSE(InOpen(2, UINT64_MAX - 3, 2));
}

}  // namespace
}  // namespace vsc::ring
