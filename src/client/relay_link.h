// RelayLink: a blocking client connection to a relay node or to the director's ring port,
// speaking clip frames (relay/clip_codec.h). Send() writes a whole frame; Receive() returns the
// next frame, whatever request it answers (the caller matches request ids). Every call takes a
// deadline; a failed or closed connection stays closed (ok() false) and the caller opens a new
// link. Thread-compatible: one thread per link.
#pragma once

#include <netinet/in.h>

#include <string>

#include "common/clock.h"
#include "common/status.h"
#include "common/unique_fd.h"
#include "relay/clip_codec.h"

namespace vsc::client {

class RelayLink {
 public:
  // `host:port` for messages. Unavailable when the connect fails or takes past the deadline.
  static Result<RelayLink> Connect(const std::string& host, uint16_t port, TimePoint deadline,
                                   const Clock& clock);

  Status Send(const relay::Frame& frame, TimePoint deadline);
  // Unavailable on timeout (the link stays usable) or when the peer closed (it does not);
  // DataLoss on bad framing.
  Result<relay::Frame> Receive(TimePoint deadline);
  bool ok() const { return fd_.valid(); }
  const std::string& where() const { return where_; }
  uint64_t NextRequestId() { return next_id_++; }

 private:
  RelayLink(UniqueFd fd, std::string where, const Clock& clock);

  UniqueFd fd_;
  std::string where_;
  const Clock* clock_;
  relay::FrameDecoder decoder_;
  uint64_t next_id_ = 1;
};

}  // namespace vsc::client
