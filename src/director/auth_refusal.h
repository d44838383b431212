// How the director's TCP sessions (control, write) answer a frame that does not open as an
// authentic, fresh envelope: a warning naming the peer and the reason, rate-limited (a flood of
// forged sessions must not flood the log), then the unauthenticated auth-failed frame
// (proto/session_frames.h), the same for every reason, and the session closes once it is written.
//
// Thread: the session's io_context thread.
#pragma once

#include <asio.hpp>
#include <string>
#include <string_view>

#include "common/clock.h"
#include "common/log_throttle.h"
#include "director/outbox.h"

namespace vsc::director {

// "host:port" of the socket's peer, for logs.
std::string PeerText(const asio::ip::tcp::socket& socket);

void RefuseUnauthenticated(Outbox& outbox, LogThrottle& log, TimePoint now,
                           std::string_view session_kind, const std::string& peer,
                           const std::string& why);

}  // namespace vsc::director
