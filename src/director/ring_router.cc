#include "director/ring_router.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "ring/table_codec.h"

namespace vsc::director {

bool OnRing(membership::State state) {
  using membership::State;
  return state == State::kActive || state == State::kBusy || state == State::kSilent;
}

std::vector<ring::NodeSpec> RingMembers(const membership::Membership& membership) {
  std::vector<ring::NodeSpec> out;
  for (const membership::ServerRecord& rec : membership.Snapshot()) {
    if (!OnRing(rec.state)) continue;
    const auto& caps = rec.reg.capabilities;
    if (std::find(caps.begin(), caps.end(), kRelayCapability) == caps.end()) continue;
    for (const membership::Endpoint& e : rec.reg.endpoints) {
      if (e.service != kRelayEndpoint || e.host.empty() || e.port == 0) continue;
      out.push_back({rec.reg.id, {e.host, e.port}});
      break;
    }
  }
  return out;  // Snapshot() is sorted by id
}

RingRouter::RingRouter(uint64_t first_version)
    : next_version_(first_version), ring_(std::make_shared<const ring::Ring>()) {
  table_ = ring::EncodeTable(*ring_);
}

bool RingRouter::Update(const membership::Membership& membership) {
  std::vector<ring::NodeSpec> members = RingMembers(membership);
  auto same = [](const ring::NodeSpec& a, const ring::NodeSpec& b) {
    return a.name == b.name && a.endpoint == b.endpoint;
  };
  if (std::equal(members.begin(), members.end(), members_.begin(), members_.end(), same)) {
    return false;
  }
  auto built = ring::Ring::Build(next_version_, members);
  if (!built.ok()) {
    // Two server names whose ids collide (1 in 2^64) or an over-long host: the ring keeps its
    // last good value and the operator is told which server to rename.
    spdlog::error("ring not changed: {}; rename or reconfigure that server",
                  built.status().ToString());
    return false;
  }
  ++next_version_;
  members_ = std::move(members);
  ring_ = std::make_shared<const ring::Ring>(std::move(built).value());
  table_ = ring::EncodeTable(*ring_);
  std::string names;
  for (const ring::Member& m : ring_->members()) names += (names.empty() ? "" : ", ") + m.name;
  spdlog::info("ring version {}: {} member(s): {}", ring_->version(), ring_->size(), names);
  return true;
}

}  // namespace vsc::director
