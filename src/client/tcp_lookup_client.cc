#include "client/tcp_lookup_client.h"

#include <fcntl.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>

#include <array>
#include <cerrno>

#include "client/lookup_target.h"
#include "client/socket_wait.h"

namespace vsc::client {
Result<TcpLookupClient> TcpLookupClient::Connect(const std::string& host, uint16_t port,
                                                 Duration timeout, const Clock* clock) {
  if (timeout <= Duration::zero()) return InvalidArgument("lookup timeout must be positive");
  VSC_ASSIGN_OR_RETURN(net::SockAddr target, ResolveHost(host, port));
  TcpLookupClient client(target, timeout, clock != nullptr ? clock : &DefaultClock());
  VSC_RETURN_IF_ERROR(client.Open(client.clock_->Now() + timeout));
  return client;
}

TcpLookupClient::TcpLookupClient(net::SockAddr target, Duration timeout, const Clock* clock)
    : target_(target), timeout_(timeout), clock_(clock) {}

Status TcpLookupClient::Open(TimePoint deadline) {
  fd_.Reset();
  decoder_ = proto::FrameDecoder(proto::kMaxLookupMessage);
  // Non-blocking throughout: every wait goes through poll with the caller's deadline.
  VSC_ASSIGN_OR_RETURN(UniqueFd fd, ConnectTcp(target_, deadline, *clock_));
  fd_ = std::move(fd);
  return Status::Ok();
}

Result<std::vector<proto::LookupAnswer>> TcpLookupClient::Lookup(std::span<const uint64_t> ids) {
  VSC_RETURN_IF_ERROR(CheckLookupIds(ids));
  const TimePoint deadline = clock_->Now() + timeout_;
  const proto::LookupRequest request = proto::LookupRequest::Of(next_request_id_++, ids);
  std::array<uint8_t, proto::kMaxRequestSize> buf;
  const size_t n = proto::EncodeRequest(request, buf);
  std::vector<uint8_t> frame;
  proto::AppendFrame(frame, std::span(buf.data(), n));

  // A connection the server closed is noticed only when we use it. Lookups are read-only, so
  // sending the request once more on a fresh connection is safe.
  for (int attempt = 0;; ++attempt) {
    if (!fd_.valid()) {
      ++reconnects_;
      VSC_RETURN_IF_ERROR(Open(deadline));
    }
    Status sent = SendAll(frame, deadline);
    if (!sent.ok()) {
      fd_.Reset();
      if (attempt == 0) continue;
      return sent;
    }
    auto answer = AwaitAnswer(request.request_id, deadline);
    if (answer.ok()) return AnswersFromResponse(std::move(answer).value(), ids);
    if (!fd_.valid() && answer.status().code() == Code::kUnavailable && attempt == 0) continue;
    return answer.status();
  }
}

Status TcpLookupClient::SendAll(std::span<const uint8_t> bytes, TimePoint deadline) {
  while (!bytes.empty()) {
    const ssize_t n = ::send(fd_.get(), bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n >= 0) {
      bytes = bytes.subspan(static_cast<size_t>(n));
      continue;
    }
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      Status st = WaitFor(fd_.get(), POLLOUT, deadline, *clock_);
      if (!st.ok())
        return Unavailable("lookup: send to " + FormatAddress(target_) + " " + st.message());
      continue;
    }
    return Unavailable(ErrnoStatus("send to " + FormatAddress(target_), errno).message());
  }
  return Status::Ok();
}

Result<proto::LookupResponse> TcpLookupClient::AwaitAnswer(uint64_t request_id,
                                                           TimePoint deadline) {
  std::array<uint8_t, 4096> buf;
  for (;;) {
    auto frame = decoder_.Next();
    if (!frame.ok()) {
      fd_.Reset();
      return DataLoss("lookup: bad framing from " + FormatAddress(target_) + ": " +
                      frame.status().message());
    }
    if (frame->has_value()) {
      auto response = proto::DecodeResponse(**frame);
      if (!response.ok()) {
        fd_.Reset();
        return DataLoss("lookup: undecodable answer from " + FormatAddress(target_) + ": " +
                        response.status().message());
      }
      if (response->request_id != request_id) {
        ++stale_answers_;
        continue;
      }
      return std::move(response).value();
    }
    Status st = WaitFor(fd_.get(), POLLIN, deadline, *clock_);
    if (!st.ok()) {
      if (st.code() != Code::kUnavailable) return st;
      return Unavailable("lookup: no answer from " + FormatAddress(target_) + " within " +
                         std::to_string(static_cast<int64_t>(ToMillis(timeout_))) + " ms");
    }
    const ssize_t n = ::recv(fd_.get(), buf.data(), buf.size(), 0);
    if (n == 0) {
      fd_.Reset();
      return Unavailable("lookup: connection closed by " + FormatAddress(target_));
    }
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK) continue;
      const int err = errno;
      fd_.Reset();
      return Unavailable(ErrnoStatus("recv from " + FormatAddress(target_), err).message());
    }
    decoder_.Feed(std::span(buf.data(), static_cast<size_t>(n)));
  }
}

}  // namespace vsc::client
