// Shared by the ring tests: seeded random rings and brute-force reference answers.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "common/random.h"
#include "ring/ring.h"

namespace vsc::ring::testing {

// A generator for one randomized test, its seed printed so a failure can be replayed.
inline Random SeededRandom(uint64_t seed) {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::printf("[   SEED   ] %s.%s seed=%llu\n", info->test_suite_name(), info->name(),
              static_cast<unsigned long long>(seed));
  return Random(seed);
}

inline NodeSpec RandomNode(Random& rng) {
  const uint64_t a = rng.Next();
  return NodeSpec{
      "rs-" + std::to_string(a % 1000000000),
      Endpoint{"10." + std::to_string((a >> 32) & 255) + "." + std::to_string((a >> 40) & 255) +
                   "." + std::to_string((a >> 48) & 255),
               static_cast<uint16_t>(1 + rng.Uniform(65535))}};
}

// n nodes with distinct random names; ids are their SHA-1 prefixes, so they are uniform.
inline Ring RandomRing(Random& rng, size_t n, uint64_t version = 1) {
  std::vector<NodeSpec> nodes;
  for (size_t i = 0; i < n; ++i) {
    nodes.push_back(RandomNode(rng));
    nodes.back().name += "-" + std::to_string(i);  // unique even if two draws agree
  }
  auto ring = Ring::Build(version, std::move(nodes));
  EXPECT_TRUE(ring.ok()) << ring.status().ToString();
  return std::move(ring).value();
}

// Brute force: the member at the smallest clockwise distance at or after k.
inline size_t BruteSuccessor(const Ring& ring, RingId k) {
  size_t best = 0;
  for (size_t i = 1; i < ring.size(); ++i) {
    if (Distance(k, ring.member(i).id) < Distance(k, ring.member(best).id)) best = i;
  }
  return best;
}

// Brute force: the member strictly before k at the smallest clockwise distance (a member at k
// itself is a full circle away).
inline size_t BrutePredecessor(const Ring& ring, RingId k) {
  size_t best = 0;
  for (size_t i = 1; i < ring.size(); ++i) {
    if (Distance(ring.member(i).id, k) - 1 < Distance(ring.member(best).id, k) - 1) best = i;
  }
  return best;
}

// Keys worth asking about: random ones, plus every member id, its neighbours, and the ends of
// the id space.
inline std::vector<RingId> ProbeKeys(Random& rng, const Ring& ring, size_t random_count) {
  std::vector<RingId> keys = {0, 1, UINT64_MAX, UINT64_MAX - 1, uint64_t{1} << 63};
  for (size_t i = 0; i < random_count; ++i) keys.push_back(rng.Next());
  for (size_t i = 0; i < ring.size() && i < 2000; ++i) {
    const RingId id = ring.member(i).id;
    keys.insert(keys.end(), {id - 1, id, id + 1});
  }
  return keys;
}

}  // namespace vsc::ring::testing
