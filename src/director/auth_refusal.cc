#include "director/auth_refusal.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "proto/session_frames.h"

namespace vsc::director {

std::string PeerText(const asio::ip::tcp::socket& socket) {
  asio::error_code ec;
  const auto peer = socket.remote_endpoint(ec);
  if (ec) return "an unknown peer";
  return peer.address().to_string() + ":" + std::to_string(peer.port());
}

void RefuseUnauthenticated(Outbox& outbox, LogThrottle& log, TimePoint now,
                           std::string_view session_kind, const std::string& peer,
                           const std::string& why) {
  if (auto held = log.Admit(why, now)) {
    spdlog::warn("{} session from {}: {}; answered auth-failed and closed it{}", session_kind, peer,
                 why, *held == 0 ? "" : fmt::format(" ({} more since the last report)", *held));
  }
  outbox.Push(proto::AuthFailedFrame());
  outbox.CloseWhenDrained();
}

}  // namespace vsc::director
