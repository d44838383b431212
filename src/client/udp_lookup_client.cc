#include "client/udp_lookup_client.h"

#include <poll.h>
#include <sys/socket.h>

#include <array>
#include <cerrno>

#include "client/lookup_target.h"

namespace vsc::client {
Result<UdpLookupClient> UdpLookupClient::Connect(const std::string& host, uint16_t port,
                                                 Duration timeout, int retries,
                                                 const Clock* clock) {
  if (timeout <= Duration::zero()) return InvalidArgument("lookup timeout must be positive");
  if (retries < 0) return InvalidArgument("lookup retries must be 0 or more");
  VSC_ASSIGN_OR_RETURN(net::SockAddr target, ResolveHost(host, port));
  VSC_ASSIGN_OR_RETURN(BoundUdpSocket socket,
                       OpenBoundUdpSocket(target.is_v6() ? AF_INET6 : AF_INET));
  return UdpLookupClient(std::move(socket.fd), target, timeout, retries,
                         clock != nullptr ? clock : &DefaultClock(), socket.port);
}

UdpLookupClient::UdpLookupClient(UniqueFd fd, net::SockAddr target, Duration timeout, int retries,
                                 const Clock* clock, uint16_t local_port)
    : fd_(std::move(fd)),
      target_(target),
      timeout_(timeout),
      retries_(retries),
      clock_(clock),
      local_port_(local_port) {}

Result<std::vector<proto::LookupAnswer>> UdpLookupClient::Lookup(std::span<const uint64_t> ids) {
  VSC_RETURN_IF_ERROR(CheckLookupIds(ids));
  const proto::LookupRequest request = proto::LookupRequest::Of(next_request_id_++, ids);
  std::array<uint8_t, proto::kMaxRequestSize> buf;
  const size_t n = proto::EncodeRequest(request, buf);
  for (int attempt = 0; attempt <= retries_; ++attempt) {
    if (attempt > 0) ++retransmissions_;
    if (::sendto(fd_.get(), buf.data(), n, 0, target_.get(), target_.length()) < 0) {
      return ErrnoStatus("sendto " + FormatAddress(target_), errno);
    }
    auto answer = AwaitAnswer(request.request_id, clock_->Now() + timeout_);
    if (answer.ok()) return AnswersFromResponse(std::move(answer).value(), ids);
    if (answer.status().code() != Code::kUnavailable) return answer.status();
  }
  return Unavailable("lookup: no answer to a request sent to " + FormatAddress(target_) +
                     " within " + std::to_string(static_cast<int64_t>(ToMillis(timeout_))) +
                     " ms after " + std::to_string(retries_ + 1) + " attempts");
}

Result<proto::LookupResponse> UdpLookupClient::AwaitAnswer(uint64_t request_id,
                                                           TimePoint deadline) {
  std::array<uint8_t, proto::kMaxLookupDatagram> buf;
  for (;;) {
    const Duration left = deadline - clock_->Now();
    if (left <= Duration::zero()) return Unavailable("timed out");
    pollfd pfd{fd_.get(), POLLIN, 0};
    const timespec ts{static_cast<time_t>(left.count() / 1'000'000'000),
                      static_cast<long>(left.count() % 1'000'000'000)};
    const int rc = ::ppoll(&pfd, 1, &ts, nullptr);
    if (rc < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus("poll(udp)", errno);
    }
    if (rc == 0) continue;  // the deadline check above ends the wait
    // Any source is fine: in dr mode the real server, not the director, answers.
    const ssize_t got =
        ::recvfrom(fd_.get(), buf.data(), buf.size(), MSG_DONTWAIT, nullptr, nullptr);
    if (got < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) continue;
      // ECONNREFUSED from an earlier ICMP error says nothing about this request; keep waiting.
      if (errno == ECONNREFUSED) continue;
      return ErrnoStatus("recvfrom(udp)", errno);
    }
    auto response = proto::DecodeResponse(std::span(buf.data(), static_cast<size_t>(got)));
    if (!response.ok() || response->request_id != request_id) {
      ++stale_answers_;
      continue;
    }
    return std::move(response).value();
  }
}

}  // namespace vsc::client
