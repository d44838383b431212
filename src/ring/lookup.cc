#include "ring/lookup.h"

#include <cstdio>
#include <cstdlib>

namespace vsc::ring {

size_t NextHop(const Ring& ring, const FingerTable& fingers, RingId k) {
  const RingId n = fingers.node_id();
  const size_t pred = fingers.node() == 0 ? ring.size() - 1 : fingers.node() - 1;
  if (InOpenClosed(k, ring.member(pred).id, n)) return fingers.node();
  if (InOpenClosed(k, n, fingers.finger_id(0))) return fingers.finger(0);
  return fingers.ClosestPrecedingFinger(k);
}

LookupPath Lookup(const Ring& ring, size_t start, RingId k) {
  LookupPath path;
  path.nodes.push_back(start);
  for (;;) {
    const size_t at = path.nodes.back();
    const size_t next = NextHop(ring, FingerTable(ring, at), k);
    if (next == at) return path;
    // Each forward moves clockwise into (at, k], so no path visits a member twice; a longer
    // path means the routing rule is broken and would loop.
    if (path.nodes.size() >= ring.size()) {
      std::fprintf(stderr, "vsc: ring lookup of %s from member %zu does not converge\n",
                   IdHex(k).c_str(), start);
      std::abort();
    }
    path.nodes.push_back(next);
  }
}

}  // namespace vsc::ring
