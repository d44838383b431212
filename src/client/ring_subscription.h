// RingSubscription: a listener on one group (the push-to-talk case: one talker, many
// listeners). It subscribes at the group's owner (or through the director in via-director
// mode) from the last seq it received, so when the owner dies or the ring moves the group it
// resubscribes at the new owner and resumes without a gap or a duplicate: clips come in seq
// order, one already received (an overlap after a resubscribe) is skipped and counted.
//
// Thread-compatible: one thread; it shares the RingClient's table and mode, and has a
// connection of its own.
#pragma once

#include <optional>
#include <string>

#include "client/relay_link.h"
#include "client/ring_client.h"

namespace vsc::client {

struct SubscriptionStats {
  uint64_t subscribes = 0;  // SUBSCRIBE requests sent (the first and each resubscribe)
  uint64_t duplicates = 0;  // clips skipped as already received
  uint64_t gaps = 0;        // a clip whose seq was not last + 1 (the buffer dropped some)
};

class RingSubscription {
 public:
  // `since`: the last seq already seen (0: everything the owner still holds).
  RingSubscription(RingClient& client, std::string group, uint64_t since);

  // The next clip, or nullopt when none came by the deadline. Errors only for refusals that a
  // retry cannot cure (the group's subscriber bound).
  Result<std::optional<Clip>> Next(TimePoint deadline);
  uint64_t last_seq() const { return last_; }
  const SubscriptionStats& stats() const { return stats_; }
  const std::string& group() const { return group_; }

 private:
  Status Open(TimePoint deadline);

  RingClient& client_;
  std::string group_;
  uint64_t last_;
  std::optional<RelayLink> link_;
  int failures_ = 0;
  SubscriptionStats stats_;
};

}  // namespace vsc::client
