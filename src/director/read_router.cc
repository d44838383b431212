#include "director/read_router.h"

#include <asio/experimental/as_tuple.hpp>
#include <cstring>

#include "director/forward_client.h"
#include "net/endpoint.h"
#include "proto/lookup_codec.h"

namespace vsc::director {
namespace {

// The largest UDP payload over IPv4: the forwarded datagram, forward header included.
constexpr size_t kMaxUdpPayload = 65507;
constexpr auto kTimerPeriod = std::chrono::milliseconds(50);

}  // namespace

ReadRouter::ReadRouter(asio::io_context& io, const proto::ClusterKey& key, const Clock& clock,
                       Replicator& replicator, ReadRouterOptions options)
    : io_(io),
      codec_(key),
      counter_(clock.WallMicros()),
      clock_(clock),
      replicator_(replicator),
      options_(options),
      queue_(options.queue_capacity),
      timer_(io) {}

Result<asio::ip::udp::socket> ReadRouter::Bind(asio::io_context& io,
                                               const asio::ip::udp::endpoint& endpoint) {
  asio::error_code ec;
  asio::ip::udp::socket socket(io);
  socket.open(endpoint.protocol(), ec);
  if (!ec) socket.bind(endpoint, ec);
  if (!ec) socket.non_blocking(true, ec);
  if (ec) {
    return IoError("SQL read port " + endpoint.address().to_string() + ":" +
                   std::to_string(endpoint.port()) + ": " + ec.message());
  }
  return socket;
}

void ReadRouter::Start(asio::ip::udp::socket socket) {
  socket_ = std::make_unique<asio::ip::udp::socket>(std::move(socket));
  asio::error_code ec;
  const asio::ip::udp::endpoint local = socket_->local_endpoint(ec);
  port_ = local.port();
  v6_port_ = local.address().is_v6();
  last_decay_ = clock_.Now();
  asio::co_spawn(io_, ReceiveLoop(this), asio::detached);
  ArmTimer();
}

void ReadRouter::Stop() {
  stopping_ = true;
  timer_.cancel();
  asio::error_code ignore;
  if (socket_) socket_->close(ignore);
}

asio::awaitable<void> ReadRouter::ReceiveLoop(ReadRouter* self) {
  std::vector<uint8_t> buf(kMaxUdpPayload + 1);
  asio::ip::udp::endpoint from;
  while (!self->stopping_) {
    auto [ec, n] = co_await self->socket_->async_receive_from(
        asio::buffer(buf), from, asio::experimental::as_tuple(asio::use_awaitable));
    if (ec) {
      if (self->stopping_ || ec == asio::error::operation_aborted) co_return;
      continue;
    }
    self->Handle(std::span<const uint8_t>(buf.data(), n), from);
  }
}

void ReadRouter::Handle(std::span<const uint8_t> datagram, const asio::ip::udp::endpoint& from) {
  counters_.received.Add();
  const net::SockAddr client = net::ToSockAddr(from);
  if (datagram.size() + ForwardClientOf(client).header.size() > kMaxUdpPayload) {
    counters_.dropped_malformed.Add();
    return;
  }
  auto opened = codec_.Open(datagram);
  if (!opened.ok()) {
    if (opened.status().code() == Code::kUnauthenticated) {
      counters_.dropped_unauthenticated.Add();
    } else {
      counters_.dropped_malformed.Add();
    }
    return;
  }
  if (!opened->message.has_read_request()) {
    counters_.dropped_malformed.Add();
    return;
  }
  const proto::ReadRequest& req = opened->message.read_request();
  if (req.min_seq() > replicator_.last_seq()) {
    counters_.refused_min_seq.Add();
    Answer(client, req.request_id(),
           "min_seq " + std::to_string(req.min_seq()) + " is beyond the last sequenced write (" +
               std::to_string(replicator_.last_seq()) + "); pass the seq a write returned");
    return;
  }
  if (Route(datagram, client, req.min_seq())) return;
  QueuedRead q;
  q.datagram.assign(datagram.begin(), datagram.end());
  q.client = client;
  q.request_id = req.request_id();
  q.min_seq = req.min_seq();
  q.deadline = clock_.Now() + options_.timeout;
  if (Status s = queue_.Push(std::move(q)); !s.ok()) {
    counters_.refused_overload.Add();
    Answer(client, req.request_id(), s.message());
    return;
  }
  counters_.queued.Add();
}

bool ReadRouter::Route(std::span<const uint8_t> datagram, const net::SockAddr& client,
                       uint64_t min_seq) {
  std::vector<ReadCandidate> candidates = replicator_.ReadCandidates();
  const asio::ip::udp family = v6_port_ ? asio::ip::udp::v6() : asio::ip::udp::v4();
  for (ReadCandidate& c : candidates) {
    if (auto it = recent_.find(c.id); it != recent_.end()) c.load += it->second;
    if (!SendTarget(family, c.sql)) c.eligible = false;  // IPv6 from an IPv4-only port
  }
  auto pick = PickReplica(candidates, min_seq);
  if (!pick) return false;
  const ReadCandidate& c = candidates[*pick];
  const proto::ForwardHeader header = ForwardClientOf(client).header;
  send_buf_.resize(header.size() + datagram.size());
  proto::WriteForwardHeader(header, send_buf_);
  std::memcpy(send_buf_.data() + header.size(), datagram.data(), datagram.size());
  asio::error_code ec;
  socket_->send_to(asio::buffer(send_buf_), *SendTarget(family, c.sql), 0, ec);
  if (ec) {
    counters_.send_errors.Add();
    return false;
  }
  recent_[c.id] += 1;
  counters_.forwarded.Add();
  return true;
}

void ReadRouter::Answer(const net::SockAddr& client, uint64_t request_id,
                        const std::string& error) {
  auto sealed = codec_.TrySeal("director", counter_.Next(), DirectorReadRefusal(request_id, error));
  if (!sealed.ok()) return;
  asio::error_code ec;
  socket_->send_to(asio::buffer(*sealed), net::ToUdpEndpoint(client), 0, ec);
  if (ec) counters_.send_errors.Add();
}

void ReadRouter::OnProgress() {
  if (stopping_ || queue_.empty()) return;
  queue_.Drain([this](const QueuedRead& r) { return Route(r.datagram, r.client, r.min_seq); });
}

void ReadRouter::ArmTimer() {
  timer_.expires_after(kTimerPeriod);
  timer_.async_wait([this](const asio::error_code& ec) {
    if (ec || stopping_) return;
    OnTimer();
    ArmTimer();
  });
}

void ReadRouter::OnTimer() {
  const TimePoint now = clock_.Now();
  if (now - last_decay_ >= options_.decay_period) {
    last_decay_ = now;
    for (auto& [id, n] : recent_) n /= 2;
  }
  OnProgress();  // replicas may have become eligible through a heartbeat
  for (const QueuedRead& r : queue_.Expire(now)) {
    counters_.timed_out.Add();
    Answer(r.client, r.request_id,
           "timeout: no replica could serve the read within " +
               std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(
                                  options_.timeout)
                                  .count()) +
               " ms" +
               (r.min_seq > 0 ? " (none has applied seq " + std::to_string(r.min_seq) + ")"
                              : " (no replica is ACTIVE and in sync)"));
  }
}

}  // namespace vsc::director
