// SessionHints: the UDP nat sessions a peer director holds (state sync, issue 11), waiting for
// their clients: when a datagram from such a client reaches this director and it has no
// session for it, the client's session opens to the destination the peer had chosen instead of
// a newly scheduled one (DestPicker::Pick), so a failover keeps a UDP conversation on its
// server as LVS's sync daemon keeps a connection entry.
//
// Bounded: at capacity, expired hints go first, then new ones are dropped and counted.
// Thread safe (a mutex): StateSync adopts on the control thread, workers take.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>
#include <unordered_map>

#include "common/clock.h"
#include "vservice/ip_address.h"

namespace vsc::director {

class SessionHints {
 public:
  explicit SessionHints(size_t capacity = 65536) : capacity_(capacity) {}

  // The peer's session client -> dest, live until `expiry` (replaces an older hint).
  void Adopt(const vservice::AddrPort& client, const vservice::AddrPort& dest, TimePoint expiry,
             TimePoint now);

  // The hinted destination of the client, if a live hint exists; the hint is used up.
  std::optional<vservice::AddrPort> Take(const vservice::AddrPort& client, TimePoint now);

  size_t size() const;
  uint64_t dropped() const;

 private:
  struct Hint {
    vservice::AddrPort dest;
    TimePoint expiry;
  };
  const size_t capacity_;
  mutable std::mutex mu_;
  std::unordered_map<vservice::AddrPort, Hint, vservice::AddrPortHash> hints_;
  uint64_t dropped_ = 0;
};

}  // namespace vsc::director
