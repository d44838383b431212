#include "director/read_relay.h"

#include <set>

#include "director/read_queue.h"
#include "net/as_tuple.h"
#include "net/endpoint.h"
#include "proto/frame.h"

namespace vsc::director {

using net::kTuple;
namespace {

// The replica's own refusals that another replica may not give ("not yet applied" at min_seq,
// a snapshot install): the read is tried elsewhere.
bool Retryable(const std::string& error) {
  return error.rfind("not yet applied", 0) == 0 || error.rfind("replica is installing", 0) == 0;
}

asio::awaitable<void> Pause(asio::io_context& io, Duration d) {
  asio::steady_timer t(io);
  t.expires_after(d);
  co_await t.async_wait(kTuple);
}

}  // namespace

ReadRelay::ReadRelay(asio::io_context& io, const proto::ClusterKey& key, const Clock& clock,
                     Replicator& replicator, ReadRelayOptions options)
    : io_(io),
      codec_(key),
      counter_(clock.WallMicros()),
      clock_(clock),
      replicator_(replicator),
      options_(options) {}

void ReadRelay::AnswerError(Outbox& out, uint64_t request_id, const std::string& error) {
  counters_.failed.Add();
  auto sealed = codec_.TrySeal("director", counter_.Next(), DirectorReadRefusal(request_id, error));
  if (!sealed.ok()) return;
  std::vector<uint8_t> frame;
  proto::AppendFrame(frame, *sealed);
  out.Push(frame);
}

asio::awaitable<void> ReadRelay::Relay(ReadRelay* self, std::vector<uint8_t> envelope,
                                       proto::ReadRequest request, std::shared_ptr<Outbox> out) {
  const TimePoint deadline = self->clock_.Now() + self->options_.timeout;
  std::string why = "no replica is ACTIVE and in sync with a TCP read path";
  if (request.min_seq() > 0) why += " at seq " + std::to_string(request.min_seq());
  std::set<std::string> failed;  // replicas that could not take this read
  for (;;) {
    if (out->closed()) co_return;
    std::vector<ReadCandidate> candidates = self->replicator_.ReadCandidates();
    for (ReadCandidate& c : candidates) {
      if (c.sql_tcp.port() == 0 || failed.count(c.id) > 0) c.eligible = false;
    }
    if (auto pick = PickReplica(candidates, request.min_seq())) {
      const ReadCandidate c = candidates[*pick];
      AttemptResult r = co_await self->TryReplica(c, envelope, request.request_id(), out);
      if (r.next == Attempt::kDone) co_return;
      why = c.id + ": " + r.error;
      failed.insert(c.id);
      continue;
    }
    if (self->clock_.Now() >= deadline) break;
    // Replication progress or a heartbeat makes a replica eligible; look again shortly.
    co_await Pause(self->io_, std::chrono::milliseconds(20));
    failed.clear();
  }
  self->AnswerError(*out, request.request_id(),
                    "timeout: no replica could serve the read within " +
                        std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(
                                           self->options_.timeout)
                                           .count()) +
                        " ms (" + why + ")");
}

asio::awaitable<ReadRelay::AttemptResult> ReadRelay::TryReplica(
    const ReadCandidate& c, std::span<const uint8_t> envelope, uint64_t request_id,
    const std::shared_ptr<Outbox>& out) {
  auto socket = std::make_shared<asio::ip::tcp::socket>(io_);
  asio::steady_timer timer(io_);
  std::weak_ptr<asio::ip::tcp::socket> weak = socket;
  // Armed for the connect and the first page, then again for each page: a replica that goes
  // silent is cut off, a large answer that keeps coming is not.
  auto arm = [&timer, weak, this] {
    timer.expires_after(options_.page_timeout);
    timer.async_wait([weak](const asio::error_code& ec) {
      if (ec) return;
      if (auto s = weak.lock()) {
        asio::error_code ignore;
        s->close(ignore);
      }
    });
  };
  arm();
  const auto udp = net::ToUdpEndpoint(c.sql_tcp);
  const asio::ip::tcp::endpoint ep(udp.address(), udp.port());
  AttemptResult skip{Attempt::kSkip, ""};
  auto [cec] = co_await socket->async_connect(ep, kTuple);
  if (cec) {
    skip.error = "connect: " + cec.message();
    co_return skip;
  }
  std::vector<uint8_t> frame;
  proto::AppendFrame(frame, envelope);
  auto [wec, wn] = co_await asio::async_write(*socket, asio::buffer(frame), kTuple);
  if (wec) {
    skip.error = "send: " + wec.message();
    co_return skip;
  }
  proto::FrameDecoder decoder(proto::kMaxEnvelopeBytes);
  std::vector<uint8_t> buf(64 * 1024);
  uint64_t pages = 0;
  std::string broken;
  for (;;) {
    auto next = decoder.Next();
    if (!next.ok()) {
      broken = "bad frame: " + next.status().message();
      break;
    }
    if (!next->has_value()) {
      auto [rec, n] = co_await socket->async_read_some(asio::buffer(buf), kTuple);
      if (rec) {
        broken =
            "the replica closed the connection mid-answer (" + rec.message() +
            "; or sent no page within " +
            std::to_string(
                std::chrono::duration_cast<std::chrono::seconds>(options_.page_timeout).count()) +
            " s)";
        break;
      }
      decoder.Feed(std::span<const uint8_t>(buf.data(), n));
      continue;
    }
    auto opened = codec_.Open(**next);
    if (!opened.ok() || !opened->message.has_read_response()) {
      broken = "the answer is not a sealed ReadResponse (is the replica's cluster key ours?)";
      break;
    }
    const proto::ReadResponse& page = opened->message.read_response();
    if (pages == 0 && !page.ok() && Retryable(page.error())) {
      skip.error = page.error();
      co_return skip;
    }
    std::vector<uint8_t> copy;
    proto::AppendFrame(copy, **next);
    out->Push(copy);
    ++pages;
    counters_.pages.Add();
    if (!page.ok() || !page.more()) {
      counters_.relayed.Add();
      timer.cancel();
      co_return AttemptResult{};
    }
    // Backpressure: the client reads slower than the replica sends. The replica's silence is
    // timed only while the relay waits for it.
    timer.cancel();
    while (out->queued_bytes() > options_.max_queued_bytes && !out->closed()) {
      co_await Pause(io_, std::chrono::milliseconds(2));
    }
    if (out->closed()) co_return AttemptResult{};
    arm();
  }
  if (pages == 0) {
    skip.error = broken;
    co_return skip;
  }
  AnswerError(*out, request_id,
              "replica " + c.id + " failed after " + std::to_string(pages) +
                  " page(s) of the answer: " + broken +
                  "; the rows received are incomplete: run the read again");
  co_return AttemptResult{};
}

}  // namespace vsc::director
