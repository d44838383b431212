#include "ring/fingers.h"

namespace vsc::ring {

FingerTable::FingerTable(const Ring& ring, size_t node)
    : node_(node), node_id_(ring.member(node).id) {
  for (int i = 0; i < kFingerCount; ++i) {
    index_[i] = static_cast<uint32_t>(ring.SuccessorIndex(start(i)));
    id_[i] = ring.member(index_[i]).id;
  }
}

size_t FingerTable::DistinctCount() const {
  // Fingers are non-decreasing in distance from n, so equal members are adjacent.
  size_t distinct = 1;
  for (int i = 1; i < kFingerCount; ++i) distinct += index_[i] != index_[i - 1];
  return distinct;
}

size_t FingerTable::ClosestPrecedingFinger(RingId k) const {
  for (int i = kFingerCount - 1; i >= 0; --i) {
    if (InOpen(id_[i], node_id_, k)) return index_[i];
  }
  return node_;
}

}  // namespace vsc::ring
