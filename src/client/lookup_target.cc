#include "client/lookup_target.h"

#include <sys/socket.h>

#include <cerrno>
#include <charconv>

namespace vsc::client {

std::string LookupTarget::ToString() const {
  return std::string(transport == Transport::kUdp ? "udp://" : "tcp://") + host + ":" +
         std::to_string(port);
}

Result<LookupTarget> ParseLookupTarget(std::string_view text) {
  const std::string shape = "; expected udp://HOST:PORT or tcp://HOST:PORT";
  LookupTarget t;
  std::string_view rest;
  if (text.starts_with("udp://")) {
    t.transport = Transport::kUdp;
    rest = text.substr(6);
  } else if (text.starts_with("tcp://")) {
    t.transport = Transport::kTcp;
    rest = text.substr(6);
  } else {
    return InvalidArgument("target '" + std::string(text) + "' has no udp:// or tcp:// scheme" +
                           shape);
  }
  const size_t colon = rest.rfind(':');
  if (colon == std::string_view::npos || colon == 0) {
    return InvalidArgument("target '" + std::string(text) + "' lacks HOST:PORT" + shape);
  }
  t.host = std::string(rest.substr(0, colon));
  const std::string_view port = rest.substr(colon + 1);
  unsigned value = 0;
  auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
  if (ec != std::errc() || end != port.data() + port.size() || value == 0 || value > 65535) {
    return InvalidArgument("target '" + std::string(text) + "' has a bad port '" +
                           std::string(port) + "' (1..65535)");
  }
  t.port = static_cast<uint16_t>(value);
  return t;
}

Result<net::SockAddr> ResolveHost(const std::string& host, uint16_t port) {
  VSC_ASSIGN_OR_RETURN(auto ep, net::ParseUdpEndpoint(net::HostPort(host, port)));
  return net::ToSockAddr(ep);
}

std::string FormatAddress(const net::SockAddr& addr) { return net::ToString(addr); }

Status CheckLookupIds(std::span<const uint64_t> ids) {
  if (ids.empty() || ids.size() > proto::kMaxLookupIds) {
    return InvalidArgument("lookup of " + std::to_string(ids.size()) +
                           " ids refused: send 1 to 10 ids per request");
  }
  return Status::Ok();
}

Result<std::vector<proto::LookupAnswer>> AnswersFromResponse(proto::LookupResponse response,
                                                             std::span<const uint64_t> asked) {
  switch (response.status) {
    case proto::LookupStatus::kOk:
      break;
    case proto::LookupStatus::kBadRequest:
      return InvalidArgument("lookup refused by the server as a bad request");
    case proto::LookupStatus::kOverloaded:
      return ResourceExhausted("lookup refused: server overloaded; retry later or slow down");
    case proto::LookupStatus::kInternal:
      return Internal("lookup failed with an internal error on the server");
  }
  if (response.answers.size() != asked.size()) {
    return DataLoss("lookup answer has " + std::to_string(response.answers.size()) +
                    " answers for " + std::to_string(asked.size()) + " ids asked");
  }
  for (size_t i = 0; i < asked.size(); ++i) {
    if (response.answers[i].id != asked[i]) {
      return DataLoss("lookup answer " + std::to_string(i) + " is for id " +
                      std::to_string(response.answers[i].id) + ", not the id asked " +
                      std::to_string(asked[i]));
    }
  }
  return std::move(response.answers);
}

Result<BoundUdpSocket> OpenBoundUdpSocket(int family) {
  UniqueFd fd(::socket(family, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return ErrnoStatus("socket(udp)", errno);
  net::SockAddr local;  // the wildcard of the family, port 0
  local.v4.sin_family = static_cast<sa_family_t>(family);
  if (::bind(fd.get(), local.get(), local.length()) != 0) return ErrnoStatus("bind(udp)", errno);
  socklen_t len = sizeof(local);
  if (::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&local), &len) != 0) {
    return ErrnoStatus("getsockname(udp)", errno);
  }
  return BoundUdpSocket{std::move(fd), local.port()};
}

}  // namespace vsc::client
