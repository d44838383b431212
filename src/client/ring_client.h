// RingClient: the clip relay's client library (DESIGN.md §8, docs/protocol.md "Clip relay").
// Modes:
// - prefetch: fetch the route table from the director once, send each request straight to
//   the group's owner; refresh the table on a MOVED answer, or when a node cannot be reached;
// - ask: ask the director for the owner of each request's group (OWNER), then go there;
// - via-director: send every request to the director's ring port, which forwards it.
// On a timeout or a broken connection the client tries the group's next distinct successor
// (which forwards to the owner, or takes the group over when the owner is gone), refreshing the
// table as it goes, up to `attempts` tries. Errors say what failed last and what to do.
//
// Thread-compatible: one client per thread. Links to nodes are kept open and reused.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "client/relay_link.h"
#include "common/clock.h"
#include "common/status.h"
#include "ring/ring.h"

namespace vsc::client {

enum class RingMode { kPrefetch, kAsk, kViaDirector };
Result<RingMode> ParseRingMode(std::string_view text);  // prefetch | ask | via-director
std::string_view RingModeName(RingMode mode);

struct RingClientOptions {
  std::string director_host = "127.0.0.1";
  uint16_t ring_port = 7400;
  RingMode mode = RingMode::kPrefetch;
  Duration timeout = std::chrono::milliseconds(2000);  // per attempt
  int attempts = 6;
};

struct PublishAck {
  uint64_t seq = 0;
  uint16_t hops = 0;  // forwards between the first node and the owner
  std::string node;   // where the request was sent ("host:port")
};

struct Clip {
  uint64_t seq = 0;
  std::vector<uint8_t> bytes;
};

struct FetchResult {
  std::vector<Clip> clips;
  uint64_t last_seq = 0;  // the group's last visible seq
  std::string gone;       // set when clips after `since` were dropped: why
};

struct RingClientStats {
  uint64_t table_refreshes = 0;
  uint64_t moved = 0;
  uint64_t failovers = 0;  // tries of a next successor after a failure
};

class RingClient {
 public:
  RingClient(RingClientOptions options, const Clock& clock);

  // The route table from the director (and cached).
  Result<std::shared_ptr<const ring::Ring>> RefreshTable();
  std::shared_ptr<const ring::Ring> table() const { return table_; }
  // Holds `ring` as the cached table (a test's deliberately stale table).
  void SetTable(ring::Ring ring) { table_ = std::make_shared<const ring::Ring>(std::move(ring)); }
  // The owner of a key, asked of the director: its name and "host:port".
  Result<std::pair<std::string, std::string>> AskOwner(const std::string& key);

  Result<PublishAck> Publish(const std::string& group, std::vector<uint8_t> clip);
  Result<FetchResult> Fetch(const std::string& group, uint64_t since);

  const RingClientStats& stats() const { return stats_; }
  const RingClientOptions& options() const { return options_; }

  // Where a request for `group` goes on try `attempt` (0 = the owner), per the mode; refreshes
  // or asks as the mode needs. For subscriptions too.
  Result<std::string> TargetFor(const std::string& group, int attempt);
  // The open link to "host:port", connecting when needed.
  Result<RelayLink*> LinkTo(const std::string& where, TimePoint deadline);
  // One request and its answer frames up to the terminal one.
  Result<std::vector<relay::Frame>> Exchange(const std::string& where, relay::Frame request);
  const Clock& clock() const { return clock_; }

 private:
  // Sends `request` for its group with failover; returns the terminal answers.
  Result<std::vector<relay::Frame>> Route(relay::Frame request, std::string* where);

  RingClientOptions options_;
  const Clock& clock_;
  std::shared_ptr<const ring::Ring> table_;
  std::map<std::string, RelayLink> links_;
  RingClientStats stats_;
};

// "host:port" of the director's ring port.
std::string DirectorRingAddress(const RingClientOptions& options);

}  // namespace vsc::client
