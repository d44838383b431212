// UdpLookupClient: blocking lookups over UDP, one request outstanding at a time.
//
// The socket is unconnected on purpose: in `dr` mode the director forwards the request and the
// real server answers from its own address, so an answer is accepted from ANY source whose
// request_id matches the outstanding request. Answers with another request_id (late answers to
// an earlier, timed-out request, or garbage) are ignored and counted. On timeout the same
// request (same request_id) is sent again up to `retries` times, so a late answer to the first
// attempt still completes the call.
//
// Thread-compatible: use one client per thread. Movable, not copyable; owns its socket.
// Lookup() returns Unavailable when every attempt timed out, the server's status as an error
// (see AnswersFromResponse), or IoError when the socket fails.
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
#include "proto/lookup_codec.h"

namespace vsc::client {

class UdpLookupClient {
 public:
  // Resolves host and opens the socket; nothing is sent. `clock` (default: a RealClock) must
  // outlive the client.
  static Result<UdpLookupClient> Connect(const std::string& host, uint16_t port,
                                         Duration timeout = std::chrono::milliseconds(200),
                                         int retries = 1, const Clock* clock = nullptr);

  // Looks up 1..10 ids; the answers come back in the order asked.
  Result<std::vector<proto::LookupAnswer>> Lookup(std::span<const uint64_t> ids);

  // Answers ignored because their request_id was not the outstanding one, or undecodable.
  uint64_t stale_answers() const { return stale_answers_; }
  // Requests sent again after a timeout.
  uint64_t retransmissions() const { return retransmissions_; }
  // The local port answers must reach (useful in tests and logs).
  uint16_t local_port() const { return local_port_; }

 private:
  UdpLookupClient(UniqueFd fd, net::SockAddr target, Duration timeout, int retries,
                  const Clock* clock, uint16_t local_port);
  // Waits for the answer to `request_id` until `deadline`; Unavailable on timeout.
  Result<proto::LookupResponse> AwaitAnswer(uint64_t request_id, TimePoint deadline);

  UniqueFd fd_;
  net::SockAddr target_;
  Duration timeout_;
  int retries_;
  const Clock* clock_;
  uint16_t local_port_;
  uint64_t next_request_id_ = 1;
  uint64_t stale_answers_ = 0;
  uint64_t retransmissions_ = 0;
};

}  // namespace vsc::client
