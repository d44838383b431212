// Chord's lookup, hop by hop (ToN 2003 Fig. 5, recursive form, DESIGN.md §8): what a ring node
// does with a key it receives, and the whole path a key takes from any start node.
//
// At node n with successor s: if n owns k (k in (predecessor, n]) it answers; if s owns k
// (k in (n, s]) it forwards to s; otherwise it forwards to its closest preceding finger for k.
// Every forward strictly shortens the clockwise distance to k, so a path ends at
// successor(k) after at most N - 1 hops, and after O(log N) with high probability.
// Pure functions over one Ring value.
#pragma once

#include <cstddef>
#include <vector>

#include "ring/fingers.h"
#include "ring/id.h"
#include "ring/ring.h"

namespace vsc::ring {

// The member the node `fingers.node()` sends a request for k to next; the node itself when it
// owns k. `fingers` must have been built from `ring`.
size_t NextHop(const Ring& ring, const FingerTable& fingers, RingId k);

struct LookupPath {
  std::vector<size_t> nodes;  // member indices: the start first, the owner of k last

  size_t hops() const { return nodes.size() - 1; }  // forwards taken
  size_t owner() const { return nodes.back(); }
};

// The route of key id k from member `start` (< ring.size()) of a non-empty ring.
LookupPath Lookup(const Ring& ring, size_t start, RingId k);

}  // namespace vsc::ring
