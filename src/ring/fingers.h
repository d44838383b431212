// A node's finger table (Chord, SIGCOMM 2001 §4.3, with 0-based i): finger[i] =
// successor(n + 2^i) for i = 0..63, so finger[0] is the immediate successor and each finger
// covers twice the span of the one before. Only O(log N) of the 64 entries are distinct.
//
// A FingerTable is derived from one Ring value and names members by their index in it; it is
// valid only with that ring (rebuild it when the ring's version changes). Plain value, pure.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "ring/id.h"
#include "ring/ring.h"

namespace vsc::ring {

inline constexpr int kFingerCount = kIdBits;

class FingerTable {
 public:
  // The fingers of member `node` (< ring.size()) of a non-empty ring.
  FingerTable(const Ring& ring, size_t node);

  size_t node() const { return node_; }
  RingId node_id() const { return node_id_; }
  // Where finger i starts: n + 2^i (mod 2^64).
  RingId start(int i) const { return node_id_ + (uint64_t{1} << i); }
  // Index into the ring of successor(start(i)).
  size_t finger(int i) const { return index_[i]; }
  RingId finger_id(int i) const { return id_[i]; }
  // How many different members the 64 fingers name.
  size_t DistinctCount() const;

  // Chord's closest_preceding_node: the finger with the highest i whose id lies in (n, k);
  // the node itself when none does (then k is in (n, successor]).
  size_t ClosestPrecedingFinger(RingId k) const;

 private:
  size_t node_;
  RingId node_id_;
  std::array<uint32_t, kFingerCount> index_;
  std::array<RingId, kFingerCount> id_;
};

}  // namespace vsc::ring
