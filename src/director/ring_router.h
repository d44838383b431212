// RingRouter: the director as the ring's router (DESIGN.md §8). Ring members are the registered
// real servers that offer the "relay" capability with a "relay" endpoint, while their state is
// ACTIVE, BUSY or SILENT: a server joins when it becomes ACTIVE, and leaves when it goes DOWN
// (SILENT past N missed heartbeats, its session closed, its DOWN flag), is drained, is removed
// or starts catching up. A SILENT member stays on the ring (its keys are not moved on a single
// late heartbeat) but takes no new subscriptions from the director's own clients.
//
// Pure: Update() reads a Membership and returns whether the ring changed; each change is a new
// version, strictly above the last. Versions start at `first_version` (the director passes its
// start time in milliseconds, so a restarted director's versions stay above its old ones).
// Thread: none; owned by the director's control thread, which publishes ring() to readers.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "membership/membership.h"
#include "ring/ring.h"

namespace vsc::director {

inline constexpr char kRelayCapability[] = "relay";
inline constexpr char kRelayEndpoint[] = "relay";

// True for the states in which a relay server is a ring member.
bool OnRing(membership::State state);

// The ring members a membership holds now, sorted by name.
std::vector<ring::NodeSpec> RingMembers(const membership::Membership& membership);

class RingRouter {
 public:
  explicit RingRouter(uint64_t first_version);

  // Rebuilds the ring when its member set or an endpoint changed. True when it did (a new
  // version: push it to every node).
  bool Update(const membership::Membership& membership);

  std::shared_ptr<const ring::Ring> ring() const { return ring_; }
  // The current ring's wire form (ring::EncodeTable).
  const std::vector<uint8_t>& table() const { return table_; }

 private:
  uint64_t next_version_;
  std::vector<ring::NodeSpec> members_;
  std::shared_ptr<const ring::Ring> ring_;
  std::vector<uint8_t> table_;
};

}  // namespace vsc::director
