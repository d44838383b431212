#include "relay/ring_view.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

#include "ring/id.h"
#include "ring/lookup.h"

namespace vsc::relay {
namespace {

ring::Ring SixNodes(uint64_t version) {
  std::vector<ring::NodeSpec> nodes;
  for (int i = 1; i <= 6; ++i) {
    nodes.push_back({"rs" + std::to_string(i), {"127.0.0.1", static_cast<uint16_t>(9000 + i)}});
  }
  return std::move(ring::Ring::Build(version, nodes)).value();
}

TEST(RingViewTest, OwnerServesStaleClientsAreMovedOthersForwardAlongFingers) {
  const ring::Ring r = SixNodes(5);
  for (size_t self = 0; self < r.size(); ++self) {
    RingViewPtr v = MakeRingView(r, {}, r.member(self).name);
    ASSERT_TRUE(v->member());
    for (int k = 0; k < 200; ++k) {
      const ring::RingId key = ring::KeyId("group-" + std::to_string(k));
      const size_t owner = r.SuccessorIndex(key);
      const Route current = Decide(*v, Type::kPublish, key, 5, false);
      const Route stale = Decide(*v, Type::kPublish, key, 4, false);
      const Route subscribe = Decide(*v, Type::kSubscribe, key, 5, false);
      const Route from_peer = Decide(*v, Type::kFetch, key, 0, true);
      const Route newer = Decide(*v, Type::kPublish, key, 6, false);
      if (owner == self) {
        EXPECT_EQ(current.kind, RouteKind::kServe);
        EXPECT_EQ(stale.kind, RouteKind::kServe);  // the owner serves whatever the version
        EXPECT_EQ(subscribe.kind, RouteKind::kServe);
        continue;
      }
      EXPECT_EQ(newer.kind, RouteKind::kUnavailable);  // we are behind: neither move nor forward
      EXPECT_EQ(stale.kind, RouteKind::kMoved);
      EXPECT_EQ(stale.member, owner);
      EXPECT_EQ(subscribe.kind, RouteKind::kMoved);  // streams are never relayed
      EXPECT_EQ(current.kind, RouteKind::kForward);
      EXPECT_EQ(current.member, ring::NextHop(r, *v->fingers, key));
      EXPECT_EQ(from_peer.kind, RouteKind::kForward);  // a peer's version is not a client's
      EXPECT_NE(current.member, self);
    }
  }
}

TEST(RingViewTest, NoRingIsUnavailableAndANonMemberMovesEverything) {
  RingViewPtr empty = MakeRingView({}, {}, "rs1");
  EXPECT_EQ(Decide(*empty, Type::kPublish, 1, 0, false).kind, RouteKind::kUnavailable);
  RingViewPtr outsider = MakeRingView(SixNodes(2), {}, "rs9");
  EXPECT_FALSE(outsider->member());
  EXPECT_EQ(Decide(*outsider, Type::kFetch, 12345, 2, true).kind, RouteKind::kMoved);
  EXPECT_FALSE(HoldsCopies(*outsider, 12345, 3));
}

TEST(RingViewTest, TheOwnerAndItsTwoSuccessorsHoldCopies) {
  const ring::Ring r = SixNodes(1);
  const ring::RingId key = ring::KeyId("talkgroup");
  const std::vector<size_t> list = r.SuccessorList(key, 3);
  size_t holders = 0;
  for (size_t self = 0; self < r.size(); ++self) {
    const bool holds = HoldsCopies(*MakeRingView(r, {}, r.member(self).name), key, 3);
    EXPECT_EQ(holds, std::find(list.begin(), list.end(), self) != list.end());
    holders += holds;
  }
  EXPECT_EQ(holders, 3u);
}

ring::Ring Named(uint64_t version, const std::vector<int>& ids) {
  std::vector<ring::NodeSpec> nodes;
  for (int i : ids) {
    nodes.push_back({"rs" + std::to_string(i), {"127.0.0.1", static_cast<uint16_t>(9000 + i)}});
  }
  return std::move(ring::Ring::Build(version, nodes)).value();
}

std::vector<std::string> Names(const ring::Ring& r, ring::RingId key) {
  std::vector<std::string> out;
  for (size_t i : r.SuccessorList(key, 3)) out.push_back(r.member(i).name);
  return out;
}

// A join: the new node pulls exactly the arcs it took over, from their previous owners; nobody
// else pulls. A leave: the successor holds copies already and pulls nothing.
TEST(RingViewTest, HandoffsAreTheArcsAJoiningNodeTookFromMembersStillOnTheRing) {
  const ring::Ring six = Named(1, {1, 2, 3, 4, 5, 6}), seven = Named(2, {1, 2, 3, 4, 5, 6, 7});
  for (const ring::Member& m : seven.members()) {
    std::vector<Handoff> plan = PlanHandoffs(*MakeRingView(six, {}, m.name), seven, m.name);
    if (m.name != "rs7") {
      EXPECT_TRUE(plan.empty()) << m.name;
      continue;
    }
    const std::vector<ring::OwnerMove> moves = ring::Diff(six, seven);
    ASSERT_EQ(plan.size(), moves.size());
    for (size_t i = 0; i < plan.size(); ++i) {
      EXPECT_EQ(plan[i].arc, moves[i].arc);
      EXPECT_EQ(plan[i].from, moves[i].from);
      EXPECT_FALSE(plan[i].state->done);
    }
  }
  for (const ring::Member& m : six.members()) {
    EXPECT_TRUE(PlanHandoffs(*MakeRingView(seven, {}, m.name), six, m.name).empty()) << m.name;
  }
}

// A handoff still under way when the next table comes is carried into it (same state); a done
// one is not; PendingHandoff finds the unfinished one covering a key.
TEST(RingViewTest, UnfinishedHandoffsAreCarriedAndPendingUntilDone) {
  const ring::Ring six = Named(1, {1, 2, 3, 4, 5, 6}), seven = Named(2, {1, 2, 3, 4, 5, 6, 7});
  std::vector<Handoff> plan = PlanHandoffs(*MakeRingView(six, {}, "rs7"), seven, "rs7");
  ASSERT_EQ(plan.size(), 1u);
  const ring::RingId inside = plan[0].arc.end;
  RingViewPtr v2 = MakeRingView(seven, {}, "rs7", plan);
  ASSERT_EQ(PendingHandoff(*v2, inside), &v2->handoffs[0]);
  EXPECT_EQ(PendingHandoff(*v2, plan[0].arc.start), nullptr);  // the arc is (start, end]
  // Version 3, same members: nothing new to pull, the unfinished handoff is carried.
  const ring::Ring again = Named(3, {1, 2, 3, 4, 5, 6, 7});
  std::vector<Handoff> carried = PlanHandoffs(*v2, again, "rs7");
  ASSERT_EQ(carried.size(), 1u);
  EXPECT_EQ(carried[0].state, plan[0].state);
  plan[0].state->done = true;
  EXPECT_EQ(PendingHandoff(*v2, inside), nullptr);
  EXPECT_TRUE(PlanHandoffs(*v2, again, "rs7").empty());
}

// Brute force over keys: after each join and leave, a key's new replicas (in the new successor
// list, not in the old) are exactly the targets of its new owner's copy orders, and no other
// node has an order for it.
TEST(RingViewTest, CopyOrdersRestoreEveryKeysReplicasAfterAJoinOrALeave) {
  const std::vector<std::pair<std::vector<int>, std::vector<int>>> changes = {
      {{1, 2, 3, 4, 5, 6}, {1, 2, 3, 4, 5, 6, 7}},  // a join
      {{1, 2, 3, 4, 5, 6, 7}, {1, 2, 3, 4, 5, 6}},  // a leave
      {{1, 2, 3, 4, 5, 6}, {1, 3, 4, 5, 6, 8, 9}},  // a leave and two joins at once
      {{1, 2, 3}, {1, 2, 3, 4}},                    // fewer members than r + 1
  };
  size_t targets = 0;
  for (const auto& [old_ids, new_ids] : changes) {
    const ring::Ring before = Named(1, old_ids), after = Named(2, new_ids);
    std::map<std::string, std::vector<CopyOrder>> orders;
    for (const ring::Member& m : after.members()) {
      orders[m.name] = PlanCopies(before, after, m.name, 3);
    }
    for (int k = 0; k < 3000; ++k) {
      const ring::RingId key = ring::KeyId("group-" + std::to_string(k));
      const std::vector<std::string> was = Names(before, key), is = Names(after, key);
      std::set<std::string> expected;
      for (const std::string& n : is) {
        if (n != is.front() && std::find(was.begin(), was.end(), n) == was.end()) {
          expected.insert(n);
        }
      }
      std::set<std::string> got;
      for (const auto& [node, list] : orders) {
        for (const CopyOrder& o : list) {
          if (!o.arc.Contains(key)) continue;
          EXPECT_EQ(node, is.front()) << "key " << k << ": only its owner sends copies";
          got.insert(o.to.begin(), o.to.end());
        }
      }
      EXPECT_EQ(got, expected) << "key " << k;
      targets += got.size();
    }
  }
  EXPECT_GT(targets, 0u);
  EXPECT_TRUE(PlanCopies(ring::Ring(), SixNodes(1), "rs1", 3).empty());  // the first table
  EXPECT_TRUE(PlanCopies(SixNodes(1), SixNodes(2), "rs9", 3).empty());   // not a member
}

}  // namespace
}  // namespace vsc::relay
