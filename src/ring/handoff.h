// What changes hands between two versions of the ring, computed rather than guessed: the arcs
// of the circle whose owner changed (the data a node must hand over on a join or leave), and the
// arcs whose replica set — the successor list of r members — changed (where copies must be
// made or may be dropped). Members are matched by name across versions.
//
// Both diffs are exact: a key id k lies in a returned arc if and only if its owner (replica
// list) differs between the two rings, and then the arc says from what to what. Arcs are
// disjoint and maximal (two adjacent arcs never carry the same change), in clockwise order of
// their ends starting at the first end at or after id 0. When either ring is empty nothing can
// be handed over (no owner on one side) and both diffs are empty. Pure functions.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "ring/id.h"
#include "ring/ring.h"

namespace vsc::ring {

// The arc (start, end] clockwise; start == end is the whole circle.
struct Arc {
  RingId start = 0;
  RingId end = 0;
  bool Contains(RingId k) const { return InOpenClosed(k, start, end); }
  bool operator==(const Arc&) const = default;
};

template <typename Label>
struct ArcChange {
  Arc arc;
  Label from;  // in the old ring
  Label to;    // in the new ring
  bool operator==(const ArcChange&) const = default;
};

// Owner names: the keys of `arc` move from node `from` to node `to`.
using OwnerMove = ArcChange<std::string>;
// Successor lists as names, owner first (Ring::SuccessorList).
using ReplicaChange = ArcChange<std::vector<std::string>>;

std::vector<OwnerMove> Diff(const Ring& before, const Ring& after);
std::vector<ReplicaChange> ReplicaDiff(const Ring& before, const Ring& after, size_t r = kReplicas);

}  // namespace vsc::ring
