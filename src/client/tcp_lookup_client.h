// TcpLookupClient: blocking lookups over one persistent TCP connection, each message framed by
// a 4-byte big-endian length (docs/protocol.md "Lookup over TCP").
//
// One request is outstanding at a time. A timed-out request is not retried (TCP does not lose
// it; the server is slow), but its late answer is recognised by request_id and skipped. When
// the server closes the connection or it fails, the next Lookup() reconnects once.
//
// Thread-compatible: use one client per thread. Movable, not copyable; owns its socket.
// Lookup() returns Unavailable on timeout, connection refusal or close, the server's status as an
// error (see AnswersFromResponse), or DataLoss when the server breaks the framing.
#pragma once

#include <netinet/in.h>

#include <chrono>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "common/unique_fd.h"
#include "net/endpoint.h"
#include "proto/frame.h"
#include "proto/lookup_codec.h"

namespace vsc::client {

class TcpLookupClient {
 public:
  // Resolves host and connects within `timeout`. `clock` (default: a RealClock) must outlive
  // the client.
  static Result<TcpLookupClient> Connect(const std::string& host, uint16_t port,
                                         Duration timeout = std::chrono::milliseconds(200),
                                         const Clock* clock = nullptr);

  // Looks up 1..10 ids; the answers come back in the order asked.
  Result<std::vector<proto::LookupAnswer>> Lookup(std::span<const uint64_t> ids);

  // Answers skipped because their request_id was not the outstanding one.
  uint64_t stale_answers() const { return stale_answers_; }
  uint64_t reconnects() const { return reconnects_; }

 private:
  TcpLookupClient(net::SockAddr target, Duration timeout, const Clock* clock);
  Status Open(TimePoint deadline);
  Status SendAll(std::span<const uint8_t> bytes, TimePoint deadline);
  Result<proto::LookupResponse> AwaitAnswer(uint64_t request_id, TimePoint deadline);

  UniqueFd fd_;
  net::SockAddr target_;
  Duration timeout_;
  const Clock* clock_;
  proto::FrameDecoder decoder_{proto::kMaxLookupMessage};
  uint64_t next_request_id_ = 1;
  uint64_t stale_answers_ = 0;
  uint64_t reconnects_ = 0;
};

}  // namespace vsc::client
