// RingView: what a relay node knows of the ring — the director's latest table, this node's
// place in it and its finger table — and Route(), the pure decision of what to do with a
// request for a group (DESIGN.md §8):
// - the ring is empty: unavailable;
// - this node owns the group: serve it;
// - a client's table is older than ours, or it subscribes to a group we do not own: MOVED, so
//   the client refreshes and goes to the owner itself (a stream is never relayed);
// - otherwise forward to the next hop on Chord's path (NextHop over our fingers).
// When a forward fails, a node that holds a copy (it is in the group's successor list) serves
// the group itself: the owner is gone and the director's next table will say so.
// Plain immutable value, built on the agent's thread and shared with every worker.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "relay/clip_codec.h"
#include "ring/fingers.h"
#include "ring/handoff.h"
#include "ring/ring.h"

namespace vsc::relay {

// An arc this node took over from a node still on the ring (a join moved it here): its clips
// are pulled from `from` before this node serves the arc's groups.
struct HandoffState {
  std::atomic<bool> done{false};
};
struct Handoff {
  ring::Arc arc;
  std::string from;
  std::shared_ptr<HandoffState> state;
};

struct RingView {
  ring::Ring ring;
  std::vector<uint8_t> table;  // the ring's wire form, as the director sent it
  size_t self = 0;             // this node's index; ring.size() when it is not a member
  std::optional<ring::FingerTable> fingers;
  std::vector<Handoff> handoffs;  // arcs still being pulled when this view was made

  bool member() const { return self < ring.size(); }
};
using RingViewPtr = std::shared_ptr<const RingView>;

RingViewPtr MakeRingView(ring::Ring ring, std::vector<uint8_t> table, std::string_view self,
                         std::vector<Handoff> handoffs = {});

// The arcs `self` takes over in `after` from members that are still on `after` (whose clips
// must be pulled: a leaving or failed owner's successor holds copies already), plus the
// unfinished handoffs of `before` that `self` still owns.
std::vector<Handoff> PlanHandoffs(const RingView& before, const ring::Ring& after,
                                  std::string_view self);
// Copies to make after a ring change, so that every group again has r copies: for each arc this
// node owns in `after` whose successor list changed, the members of the new list that were not
// on the old one (a join put them there, or a leave moved them up). This node sends them the
// clips it holds of the arc. Empty for the first table (nothing is held yet) and when `self`
// is not a member of `after`. A node that itself takes the arc over pulls it first (PlanHandoffs)
// and is never among the targets.
struct CopyOrder {
  ring::Arc arc;
  std::vector<std::string> to;  // member names, in successor-list order
  bool operator==(const CopyOrder&) const = default;
};
std::vector<CopyOrder> PlanCopies(const ring::Ring& before, const ring::Ring& after,
                                  std::string_view self, size_t r);
// The unfinished handoff covering key, or nullptr.
const Handoff* PendingHandoff(const RingView& view, ring::RingId key);

enum class RouteKind { kServe, kMoved, kForward, kUnavailable };

struct Route {
  RouteKind kind = RouteKind::kUnavailable;
  size_t member = 0;  // the owner (kMoved) or the next hop (kForward), an index into the ring
};

Route Decide(const RingView& view, Type type, ring::RingId key, uint64_t client_version,
             bool from_peer);

// True when this node is among the first r members clockwise from the key's owner: it holds
// copies of the group and may take the group over.
bool HoldsCopies(const RingView& view, ring::RingId key, size_t r);

}  // namespace vsc::relay
