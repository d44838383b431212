#include "relay/ring_view.h"

#include <algorithm>

#include "ring/lookup.h"

namespace vsc::relay {

RingViewPtr MakeRingView(ring::Ring ring, std::vector<uint8_t> table, std::string_view self,
                         std::vector<Handoff> handoffs) {
  auto v = std::make_shared<RingView>();
  v->handoffs = std::move(handoffs);
  v->ring = std::move(ring);
  v->table = std::move(table);
  v->self = v->ring.IndexOf(self);
  if (v->member()) v->fingers.emplace(v->ring, v->self);
  return v;
}

std::vector<Handoff> PlanHandoffs(const RingView& before, const ring::Ring& after,
                                  std::string_view self) {
  std::vector<Handoff> out;
  const size_t me = after.IndexOf(self);
  if (me == after.size()) return out;
  for (const Handoff& h : before.handoffs) {
    if (!h.state->done && after.Successor(h.arc.end).name == self) out.push_back(h);
  }
  for (const ring::OwnerMove& m : ring::Diff(before.ring, after)) {
    if (m.to != self || after.IndexOf(m.from) == after.size()) continue;
    out.push_back({m.arc, m.from, std::make_shared<HandoffState>()});
  }
  return out;
}

std::vector<CopyOrder> PlanCopies(const ring::Ring& before, const ring::Ring& after,
                                  std::string_view self, size_t r) {
  std::vector<CopyOrder> out;
  for (const ring::ReplicaChange& c : ring::ReplicaDiff(before, after, r)) {
    if (c.to.empty() || c.to.front() != self) continue;
    CopyOrder order{c.arc, {}};
    for (const std::string& name : c.to) {
      if (name != self && std::find(c.from.begin(), c.from.end(), name) == c.from.end()) {
        order.to.push_back(name);
      }
    }
    if (!order.to.empty()) out.push_back(std::move(order));
  }
  return out;
}

const Handoff* PendingHandoff(const RingView& v, ring::RingId key) {
  for (const Handoff& h : v.handoffs) {
    if (!h.state->done && h.arc.Contains(key)) return &h;
  }
  return nullptr;
}

Route Decide(const RingView& v, Type type, ring::RingId key, uint64_t client_version,
             bool from_peer) {
  if (v.ring.empty()) return {RouteKind::kUnavailable, 0};
  const size_t owner = v.ring.SuccessorIndex(key);
  if (owner == v.self) return {RouteKind::kServe, owner};
  // A client with a newer table than ours knows better: we are behind the director's push
  // (a few ms), so we neither redirect it with our older table nor forward along it.
  if (!from_peer && client_version > v.ring.version()) return {RouteKind::kUnavailable, owner};
  const bool stale = !from_peer && client_version < v.ring.version();
  if (stale || type == Type::kSubscribe || !v.member()) return {RouteKind::kMoved, owner};
  return {RouteKind::kForward, ring::NextHop(v.ring, *v.fingers, key)};
}

bool HoldsCopies(const RingView& v, ring::RingId key, size_t r) {
  if (!v.member()) return false;
  for (size_t i : v.ring.SuccessorList(key, r)) {
    if (i == v.self) return true;
  }
  return false;
}

}  // namespace vsc::relay
