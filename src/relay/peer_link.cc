#include "relay/peer_link.h"

#include <asio/experimental/as_tuple.hpp>
#include <optional>

#include "relay/frame_reader.h"

namespace vsc::relay {

using asio::experimental::as_tuple;

PeerLink::PeerLink(asio::io_context& io, const proto::ClusterKey& key, std::string self_name,
                   asio::ip::tcp::endpoint peer, std::chrono::milliseconds timeout,
                   const Clock& clock)
    : io_(io),
      key_(key),
      self_name_(std::move(self_name)),
      peer_(peer),
      timeout_(timeout),
      clock_(clock),
      timeout_timer_(io),
      socket_(std::make_shared<asio::ip::tcp::socket>(io)) {}

void PeerLink::Start(Frame request, Done done) {
  if (broken_) {
    done(Unavailable(failure_));
    return;
  }
  if (!started_) {
    started_ = true;
    asio::co_spawn(io_, Connect(shared_from_this()), asio::detached);
  }
  const uint64_t id = next_id_++;
  request.request_id = id;
  pending_[id] = Pending{std::move(done), clock_.Now() + timeout_, {}};
  ArmTimeout();
  Send(std::move(request));
}

asio::awaitable<PeerLink::Answer> PeerLink::Call(std::shared_ptr<PeerLink> self, Frame request) {
  struct Waiter {
    explicit Waiter(asio::io_context& io) : done(io) {}
    asio::steady_timer done;  // cancelled when the answer is in
    std::optional<Answer> answer;
  };
  auto waiter = std::make_shared<Waiter>(self->io_);
  waiter->done.expires_at(asio::steady_timer::time_point::max());
  self->Start(std::move(request), [waiter](Answer answer) {
    waiter->answer = std::move(answer);
    waiter->done.cancel();
  });
  // Answered at once when the link was broken; otherwise the callback wakes this coroutine.
  if (!waiter->answer) co_await waiter->done.async_wait(as_tuple(asio::use_awaitable));
  co_return std::move(*waiter->answer);
}

void PeerLink::ArmTimeout() {
  if (timeout_armed_ || pending_.empty() || broken_) return;
  timeout_armed_ = true;
  timeout_timer_.expires_after(pending_.begin()->second.deadline - clock_.Now());
  timeout_timer_.async_wait([self = shared_from_this()](const asio::error_code&) {
    self->timeout_armed_ = false;
    self->OnTimeout();
  });
}

void PeerLink::OnTimeout() {
  if (broken_ || pending_.empty()) return;
  if (pending_.begin()->second.deadline <= clock_.Now()) {
    Fail("no answer from ring node " + peer_.address().to_string() + ":" +
         std::to_string(peer_.port()) + " within " + std::to_string(timeout_.count()) + " ms");
    return;
  }
  ArmTimeout();  // the oldest request now is a later one
}

void PeerLink::OnAnswer(Frame f) {
  auto it = pending_.find(f.request_id);
  if (it == pending_.end()) return;  // the link failed meanwhile
  const bool terminal = IsTerminal(f.type);
  it->second.frames.push_back(std::move(f));
  if (!terminal) return;
  Pending done = std::move(it->second);
  pending_.erase(it);
  done.done(std::move(done.frames));
}

void PeerLink::Send(Frame frame) {
  if (!ready_) {
    before_ready_.push_back(std::move(frame));
    return;
  }
  outbox_->Push(sealer_->Encode(frame));
}

void PeerLink::Close() { Fail("closed"); }

void PeerLink::Fail(const std::string& why) {
  if (broken_) return;
  broken_ = true;
  failure_ = why;
  asio::error_code ignore;
  socket_->close(ignore);
  if (outbox_) outbox_->Close();
  timeout_timer_.cancel();
  // Moved out first: a callback may start a request on this link (answered at once: broken).
  std::map<uint64_t, Pending> failed;
  failed.swap(pending_);
  for (auto& [id, p] : failed) p.done(Unavailable(failure_));
}

asio::awaitable<void> PeerLink::Connect(std::shared_ptr<PeerLink> self) {
  const std::string peer_text =
      self->peer_.address().to_string() + ":" + std::to_string(self->peer_.port());
  auto [ec] = co_await self->socket_->async_connect(self->peer_, as_tuple(asio::use_awaitable));
  if (self->broken_) co_return;
  if (ec) {
    self->Fail("cannot connect to ring node " + peer_text + ": " + ec.message());
    co_return;
  }
  self->socket_->set_option(asio::ip::tcp::no_delay(true));
  self->outbox_ = std::make_shared<net::Outbox>(self->socket_);
  asio::co_spawn(self->io_, net::Outbox::Run(self->outbox_), asio::detached);
  self->nonce_ = proto::NewNonce();
  Frame hello;
  hello.type = Type::kPeerHello;
  hello.key = self->self_name_;
  hello.payload.assign(self->nonce_.begin(), self->nonce_.end());
  self->outbox_->Push(EncodeFrame(hello));
  co_await Reader(self);
}

asio::awaitable<void> PeerLink::Reader(std::shared_ptr<PeerLink> self) {
  auto on_frame = [self](Frame f) {
    if (!self->ready_) return self->OnChallenge(f);
    if (Status s = self->opener_->Open(f); !s.ok()) {
      self->Fail(s.message());
      return false;
    }
    self->OnAnswer(std::move(f));
    return !self->broken_;
  };
  ReadResult read = co_await ReadFrames(*self->socket_, on_frame);
  if (read.end == ReadEnd::kClosed) {
    self->Fail("ring node " + self->peer_.address().to_string() + ":" +
               std::to_string(self->peer_.port()) + " closed the connection: " + read.ec.message());
  } else if (read.end == ReadEnd::kMalformed) {
    self->Fail(read.status.message());
  }
}

bool PeerLink::OnChallenge(Frame& f) {
  // The acceptor's challenge, tagged with our nonce: it holds the cluster key.
  opener_ = std::make_unique<PeerOpener>(key_, nonce_);
  Status s = f.type == Type::kPeerChallenge
                 ? opener_->Open(f)
                 : Unauthenticated("ring node answered the peer hello with type " +
                                   std::to_string(static_cast<int>(f.type)));
  auto theirs = s.ok() ? NonceOf(f) : Result<proto::Nonce>(s);
  if (!theirs.ok()) {
    Fail("peer handshake with " + peer_.address().to_string() + ": " + theirs.status().message());
    return false;
  }
  sealer_ = std::make_unique<PeerSealer>(key_, *theirs);
  ready_ = true;
  while (!before_ready_.empty()) {
    Frame q = std::move(before_ready_.front());
    before_ready_.pop_front();
    Send(std::move(q));
  }
  return true;
}

}  // namespace vsc::relay
