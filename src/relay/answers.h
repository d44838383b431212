// The answer frames that the relay nodes and the director's ring port both send
// (docs/protocol.md "Clip relay"). Pure.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "relay/clip_codec.h"
#include "ring/ring.h"

namespace vsc::relay {

// REFUSED for `request`: code = why, payload = text.
Frame RefusalFrame(const Frame& request, Refusal why, std::string_view text);
// MOVED or OWNER: key = the member's name, payload = its "host:port", version = the ring's.
Frame MemberFrame(Type type, uint64_t request_id, uint64_t version, const ring::Member& m);
// TABLE: payload = the route table of version `version`.
Frame TableFrame(uint64_t request_id, uint64_t version, std::vector<uint8_t> table);
// "127.0.0.1:7010", "[::1]:7010".
std::string EndpointText(const ring::Member& m);

}  // namespace vsc::relay
