#include "ring/handoff.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "ring_test_util.h"

namespace vsc::ring {
namespace {

using testing::ProbeKeys;
using testing::RandomNode;
using testing::RandomRing;
using testing::SeededRandom;

std::vector<NodeSpec> Specs(const Ring& ring) {
  std::vector<NodeSpec> out;
  for (const Member& m : ring.members()) out.push_back(NodeSpec{m.name, m.endpoint});
  return out;
}

Ring Rebuild(uint64_t version, std::vector<NodeSpec> nodes) {
  auto r = Ring::Build(version, std::move(nodes));
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return std::move(r).value();
}

Ring WithJoin(const Ring& ring, NodeSpec node) {
  std::vector<NodeSpec> nodes = Specs(ring);
  nodes.push_back(std::move(node));
  return Rebuild(ring.version() + 1, std::move(nodes));
}

Ring WithLeave(const Ring& ring, size_t index) {
  std::vector<NodeSpec> nodes = Specs(ring);
  nodes.erase(nodes.begin() + static_cast<std::ptrdiff_t>(index));
  return Rebuild(ring.version() + 1, std::move(nodes));
}

// A next version: some members leave, some join.
Ring Churned(Random& rng, const Ring& ring, size_t leaves, size_t joins) {
  std::vector<NodeSpec> nodes = Specs(ring);
  for (size_t i = 0; i < joins; ++i) {
    nodes.push_back(RandomNode(rng));
    nodes.back().name += "-new" + std::to_string(i);
  }
  // Leaves after joins, so even the only member of a ring of one may be replaced.
  for (size_t i = 0; i < leaves && nodes.size() > 1; ++i) {
    nodes.erase(nodes.begin() + static_cast<std::ptrdiff_t>(rng.Uniform(nodes.size())));
  }
  return Rebuild(ring.version() + 1, std::move(nodes));
}

std::vector<std::string> ReplicaNames(const Ring& ring, RingId k, size_t r) {
  std::vector<std::string> names;
  for (size_t i : ring.SuccessorList(k, r)) names.push_back(ring.member(i).name);
  return names;
}

// Arcs are disjoint and maximal: neighbours never carry the same change.
template <typename Label>
void ExpectMaximal(const std::vector<ArcChange<Label>>& changes) {
  for (size_t i = 0; i < changes.size() && changes.size() > 1; ++i) {
    const auto& a = changes[i];
    const auto& b = changes[(i + 1) % changes.size()];
    if (a.arc.end == b.arc.start) {
      EXPECT_FALSE(a.from == b.from && a.to == b.to) << "arc " << i;
    }
  }
}

// For each key: the changes whose arc holds it (at most one may).
template <typename Label>
const ArcChange<Label>* ChangeAt(const std::vector<ArcChange<Label>>& changes, RingId k) {
  const ArcChange<Label>* found = nullptr;
  for (const auto& c : changes) {
    if (!c.arc.Contains(k)) continue;
    EXPECT_EQ(found, nullptr) << "two arcs hold " << IdHex(k);
    found = &c;
  }
  return found;
}

TEST(HandoffTest, IdenticalMembershipMovesNothing) {
  Random rng = SeededRandom(501);
  const Ring ring = RandomRing(rng, 30);
  EXPECT_TRUE(Diff(ring, ring).empty());
  EXPECT_TRUE(ReplicaDiff(ring, ring).empty());
  // A new version with the same names (endpoints changed) owns the same arcs.
  std::vector<NodeSpec> moved = Specs(ring);
  for (NodeSpec& n : moved) n.endpoint.port = static_cast<uint16_t>(n.endpoint.port ^ 1);
  EXPECT_TRUE(Diff(ring, Rebuild(2, moved)).empty());
  // Nothing can be handed over to or from an empty ring.
  EXPECT_TRUE(Diff(Ring(), ring).empty());
  EXPECT_TRUE(ReplicaDiff(ring, Ring()).empty());
}

TEST(HandoffTest, ReplacingTheOnlyNodeMovesTheWholeCircle) {
  const Ring a = Rebuild(1, {NodeSpec{"rs-a", Endpoint{"10.0.0.1", 1}}});
  const Ring b = Rebuild(2, {NodeSpec{"rs-b", Endpoint{"10.0.0.2", 1}}});
  const auto moves = Diff(a, b);
  ASSERT_EQ(moves.size(), 1u);
  EXPECT_EQ(moves[0].arc.start, moves[0].arc.end);  // (x, x] is the whole circle
  EXPECT_EQ(moves[0].from, "rs-a");
  EXPECT_EQ(moves[0].to, "rs-b");
}

// One run of changes may cross id 0: a ring {a} replaced by {x, y} with a after both moves
// (y, a] and (a, x] from a to x, one arc around 0.
TEST(HandoffTest, AChangeAcrossIdZeroIsOneArc) {
  std::vector<NodeSpec> three;
  for (const char* name : {"rs-a", "rs-b", "rs-c"}) three.push_back({name, {"10.0.0.1", 1}});
  const Ring sorted = Rebuild(1, three);
  const Member& a = sorted.member(2);  // the largest id
  const Ring before = Rebuild(1, {NodeSpec{a.name, a.endpoint}});
  const Ring after = Rebuild(2, {NodeSpec{sorted.member(0).name, a.endpoint},
                                 NodeSpec{sorted.member(1).name, a.endpoint}});
  const auto moves = Diff(before, after);
  ASSERT_EQ(moves.size(), 2u);
  EXPECT_EQ(moves[0], (OwnerMove{Arc{sorted.member(1).id, sorted.member(0).id}, a.name,
                                 sorted.member(0).name}));
  EXPECT_EQ(moves[1], (OwnerMove{Arc{sorted.member(0).id, sorted.member(1).id}, a.name,
                                 sorted.member(1).name}));
}

TEST(HandoffTest, JoinMovesExactlyTheArcBetweenThePredecessorAndTheNewNode) {
  Random rng = SeededRandom(502);
  for (size_t n : {1, 2, 3, 10, 1000}) {
    SCOPED_TRACE("N = " + std::to_string(n));
    const Ring before = RandomRing(rng, n);
    const Ring after = WithJoin(before, NodeSpec{"joiner", Endpoint{"10.9.9.9", 9}});
    const size_t x = after.IndexOf("joiner");
    const RingId id = after.member(x).id;
    const auto moves = Diff(before, after);
    ASSERT_EQ(moves.size(), 1u);
    EXPECT_EQ(moves[0].arc, (Arc{after.Predecessor(id).id, id}));
    EXPECT_EQ(moves[0].from, before.Successor(id).name);
    EXPECT_EQ(moves[0].to, "joiner");
    // And the leave undoes it.
    const auto back = Diff(after, before);
    ASSERT_EQ(back.size(), 1u);
    EXPECT_EQ(back[0].arc, moves[0].arc);
    EXPECT_EQ(back[0].from, "joiner");
    EXPECT_EQ(back[0].to, moves[0].from);
  }
}

TEST(HandoffTest, DiffMatchesBruteForceOverRandomKeys) {
  Random rng = SeededRandom(503);
  for (size_t n : {1, 2, 3, 10, 100, 1000}) {
    for (int round = 0; round < 4; ++round) {
      SCOPED_TRACE("N = " + std::to_string(n) + " round " + std::to_string(round));
      const Ring before = RandomRing(rng, n);
      const Ring after = Churned(rng, before, rng.Uniform(n / 4 + 2), rng.Uniform(n / 4 + 2));
      const auto moves = Diff(before, after);
      ExpectMaximal(moves);
      std::vector<RingId> keys = ProbeKeys(rng, before, 3000);
      for (RingId k : ProbeKeys(rng, after, 0)) keys.push_back(k);
      size_t wrong = 0;
      for (RingId k : keys) {
        const std::string& from = before.Successor(k).name;
        const std::string& to = after.Successor(k).name;
        const OwnerMove* m = ChangeAt(moves, k);
        if (from == to) {
          wrong += m != nullptr;
        } else {
          wrong += m == nullptr || m->from != from || m->to != to;
        }
      }
      EXPECT_EQ(wrong, 0u);
    }
  }
}

TEST(HandoffTest, ReplicaDiffMatchesBruteForceOverRandomKeys) {
  Random rng = SeededRandom(504);
  for (size_t n : {1, 2, 3, 4, 10, 100, 1000}) {
    for (int round = 0; round < 4; ++round) {
      SCOPED_TRACE("N = " + std::to_string(n) + " round " + std::to_string(round));
      const Ring before = RandomRing(rng, n);
      const Ring after = Churned(rng, before, rng.Uniform(3), rng.Uniform(3));
      const auto changes = ReplicaDiff(before, after);
      ExpectMaximal(changes);
      size_t wrong = 0;
      for (RingId k : ProbeKeys(rng, before, 3000)) {
        const auto from = ReplicaNames(before, k, kReplicas);
        const auto to = ReplicaNames(after, k, kReplicas);
        const ReplicaChange* c = ChangeAt(changes, k);
        wrong += from == to ? c != nullptr : (c == nullptr || c->from != from || c->to != to);
      }
      EXPECT_EQ(wrong, 0u);
    }
  }
}

// Chord's consistent hashing (SIGCOMM 2001 §4.2): a join or leave reassigns only the keys of
// one arc, on average 1/N of them.
TEST(HandoffTest, JoinOrLeaveMovesAboutOneNthOfRandomKeys) {
  Random rng = SeededRandom(505);
  constexpr size_t kNodes = 1000;
  constexpr size_t kChanges = 400;
  constexpr size_t kKeys = 2000;
  const Ring base = RandomRing(rng, kNodes);
  std::vector<RingId> keys;
  for (size_t i = 0; i < kKeys; ++i) keys.push_back(rng.Next());
  size_t moved_by_joins = 0, moved_by_leaves = 0;
  for (size_t c = 0; c < kChanges; ++c) {
    const Ring joined = WithJoin(base, NodeSpec{"joiner-" + std::to_string(c), {"10.1.1.1", 1}});
    const Ring left = WithLeave(base, rng.Uniform(kNodes));
    for (const Ring* after : {&joined, &left}) {
      const auto moves = Diff(base, *after);
      ASSERT_EQ(moves.size(), 1u);
      size_t moved = 0;
      for (RingId k : keys) {
        const bool owner_changed = base.Successor(k).name != after->Successor(k).name;
        ASSERT_EQ(owner_changed, moves[0].arc.Contains(k)) << IdHex(k);
        moved += owner_changed;
      }
      (after == &joined ? moved_by_joins : moved_by_leaves) += moved;
    }
  }
  const double join_share = double(moved_by_joins) / (kChanges * kKeys);
  const double leave_share = double(moved_by_leaves) / (kChanges * kKeys);
  std::printf("[ MEASURED ] N=%zu: a join moves %.5f of the keys, a leave %.5f (1/N = %.5f)\n",
              kNodes, join_share, leave_share, 1.0 / kNodes);
  // The moved share of one change is the arc's length: about exponential with mean 1/(N+1)
  // (join) or 1/N (leave), so over 400 changes and 2000 keys its relative spread is about 6 %;
  // the band is over three times that.
  EXPECT_NEAR(join_share * (kNodes + 1), 1.0, 0.2);
  EXPECT_NEAR(leave_share * kNodes, 1.0, 0.2);
}

}  // namespace
}  // namespace vsc::ring
