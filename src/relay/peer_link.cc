#include "relay/peer_link.h"

#include <asio/experimental/as_tuple.hpp>

#include "relay/frame_reader.h"

namespace vsc::relay {

using asio::experimental::as_tuple;

PeerLink::PeerLink(asio::io_context& io, const proto::ClusterKey& key, std::string self_name,
                   asio::ip::tcp::endpoint peer, std::chrono::milliseconds timeout)
    : io_(io),
      key_(key),
      self_name_(std::move(self_name)),
      peer_(peer),
      timeout_(timeout),
      socket_(std::make_shared<asio::ip::tcp::socket>(io)) {}

asio::awaitable<Result<std::vector<Frame>>> PeerLink::Call(std::shared_ptr<PeerLink> self,
                                                           Frame request) {
  if (self->broken_) co_return Unavailable(self->failure_);
  if (!self->started_) {
    self->started_ = true;
    asio::co_spawn(self->io_, Connect(self), asio::detached);
  }
  const uint64_t id = self->next_id_++;
  request.request_id = id;
  auto pending = std::make_shared<Pending>(self->io_);
  pending->done.expires_after(self->timeout_);
  self->pending_[id] = pending;
  self->Send(std::move(request));
  if (!self->broken_) co_await pending->done.async_wait(as_tuple(asio::use_awaitable));
  self->pending_.erase(id);
  if (pending->complete) co_return std::move(pending->frames);
  if (!self->broken_) {
    self->Fail("no answer from ring node " + self->peer_.address().to_string() + ":" +
               std::to_string(self->peer_.port()) + " within " +
               std::to_string(self->timeout_.count()) + " ms");
  }
  co_return Unavailable(self->failure_);
}

void PeerLink::Send(Frame frame) {
  if (!ready_) {
    before_ready_.push_back(std::move(frame));
    return;
  }
  sealer_->Seal(frame);
  outbox_->Push(EncodeFrame(frame));
}

void PeerLink::Close() { Fail("closed"); }

void PeerLink::Fail(const std::string& why) {
  if (broken_) return;
  broken_ = true;
  failure_ = why;
  asio::error_code ignore;
  socket_->close(ignore);
  if (outbox_) outbox_->Close();
  for (auto& [id, p] : pending_) p->done.cancel();
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
    auto it = self->pending_.find(f.request_id);
    if (it == self->pending_.end()) return true;  // its caller timed out already
    const bool terminal = IsTerminal(f.type);
    it->second->frames.push_back(std::move(f));
    if (terminal) {
      it->second->complete = true;
      it->second->done.cancel();
    }
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
