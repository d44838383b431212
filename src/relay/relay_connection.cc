#include "relay/relay_connection.h"

#include <spdlog/spdlog.h>

#include <iterator>

#include "common/big_endian.h"
#include "relay/frame_reader.h"
#include "ring/id.h"

namespace vsc::relay {
namespace {

asio::awaitable<std::vector<Frame>> RunFetch(RelayWorker* shard, Frame request) {
  co_return shard->Fetch(request);
}

asio::awaitable<std::vector<Frame>> RunCopy(RelayWorker* shard, Frame request) {
  co_return shard->Copy(std::move(request));
}

// In an optional: co_spawn's result must be default-constructible.
asio::awaitable<std::optional<Result<std::vector<Frame>>>> RunHandOver(RelayWorker* shard,
                                                                       ring::Arc arc,
                                                                       uint64_t version) {
  co_return shard->HandOverArc(arc, version);
}

asio::awaitable<void> RunCount(RelayWorker* shard, size_t clips) {
  shard->CountHandedOver(clips);
  co_return;
}

asio::awaitable<std::vector<Frame>> RunSubscribe(RelayWorker* shard, Frame request, SubscriberId id,
                                                 Sink sink) {
  co_return shard->Subscribe(request, id, sink);
}

bool IsGroupRequest(Type t) {
  return t == Type::kPublish || t == Type::kSubscribe || t == Type::kFetch || t == Type::kCopy;
}

}  // namespace

Connection::Connection(RelayWorker& worker, asio::ip::tcp::socket socket)
    : worker_(worker),
      socket_(std::make_shared<asio::ip::tcp::socket>(std::move(socket))),
      outbox_(std::make_shared<net::Outbox>(socket_)),
      bucket_(worker.node().options().rate, worker.node().options().burst,
              worker.node().clock().Now()) {}

asio::awaitable<void> Connection::Run(std::shared_ptr<Connection> self) {
  RelayWorker& w = self->worker_;
  asio::co_spawn(w.io(), net::Outbox::Run(self->outbox_), asio::detached);
  asio::error_code ignore;
  self->socket_->set_option(asio::ip::tcp::no_delay(true), ignore);
  const size_t open = ++w.node().open_connections();
  w.counters().connections.Add();
  if (open > w.node().options().max_connections) {
    w.counters().refused_connections.Add();
    self->Send(RefusalFrame({}, Refusal::kConnections,
                            "this ring node serves its maximum of " +
                                std::to_string(w.node().options().max_connections) +
                                " connections; try again later or another node"));
    self->outbox_->CloseWhenDrained();
  } else {
    w.Track(self);
    bool first = true;
    auto on_frame = [self, &first, &w](Frame f) {
      if (first && f.type == Type::kPeerHello) {
        first = false;
        if (!self->AcceptPeer(f)) self->Close();
        return !self->closed_;
      }
      first = false;
      if (self->peer_ && !self->opener_->Open(f).ok()) {
        w.counters().peer_auth_failures.Add();
        spdlog::warn(
            "relay: peer {} sent a frame that does not verify (wrong cluster key?); closing its "
            "connection",
            self->peer_name_);
        self->Close();
        return false;
      }
      if (self->peer_ && f.type == Type::kCopy && self->CopyHere(f)) return !self->closed_;
      asio::co_spawn(w.io(), Handle(self, std::move(f)), asio::detached);
      return !self->closed_;
    };
    ReadResult read = co_await ReadFrames(*self->socket_, on_frame);
    if (read.end == ReadEnd::kMalformed && !self->closed_) {
      self->Send(RefusalFrame({}, Refusal::kMalformed, read.status.message()));
      self->outbox_->CloseWhenDrained();
      self->closed_ = true;
    }
    w.Untrack(self.get());
    // A Serve still under way sees closed_ and undoes its subscription. After a framing error
    // the refusal is still being written (CloseWhenDrained closes the socket then).
    if (!self->closed_) self->Close();
  }
  --w.node().open_connections();
  for (auto& [group, id] : self->subscriptions_) {
    RelayWorker& shard = w.node().worker(w.node().ShardOf(group));
    asio::post(shard.io(), [&shard, group = group, id = id] { shard.Unsubscribe(group, id); });
  }
  self->subscriptions_.clear();
}

bool Connection::AcceptPeer(const Frame& hello) {
  auto theirs = NonceOf(hello);
  if (!theirs.ok() || hello.key.empty()) return false;
  const proto::ClusterKey& key = worker_.node().key();
  sealer_.emplace(key, *theirs);
  const proto::Nonce ours = proto::NewNonce();
  opener_.emplace(key, ours);
  peer_ = true;
  peer_name_ = hello.key;
  Frame challenge;
  challenge.type = Type::kPeerChallenge;
  challenge.payload.assign(ours.begin(), ours.end());
  Send(std::move(challenge));
  return true;
}

void Connection::Send(Frame frame) {
  if (closed_) return;
  if (peer_) {
    outbox_->Push(sealer_->Encode(frame));
  } else {
    outbox_->Push(EncodeFrame(frame));
  }
}

void Connection::SendEncoded(const std::vector<uint8_t>& frame) {
  if (closed_) return;
  if (outbox_->queued_bytes() > worker_.node().options().max_backlog) {
    worker_.counters().dropped_slow.Add();
    spdlog::warn("relay: dropping a subscriber that reads too slowly ({} bytes unwritten)",
                 outbox_->queued_bytes());
    Close();
    return;
  }
  outbox_->Push(frame);
}

void Connection::Close() {
  if (closed_) return;
  closed_ = true;
  outbox_->Close();
  asio::error_code ignore;
  socket_->close(ignore);
}

void Connection::Answer(std::vector<Frame> frames, uint64_t request_id) {
  for (Frame& f : frames) {
    f.request_id = request_id;
    if (f.type == Type::kMoved) worker_.counters().moved.Add();
    Send(std::move(f));
  }
}

std::optional<Frame> Connection::Admit(const Frame& r) {
  const RelayOptions& o = worker_.node().options();
  auto refuse = [&](Refusal why, const std::string& text) {
    worker_.counters().refused.Add();
    return std::optional<Frame>(RefusalFrame(r, why, text));
  };
  const bool client_type = r.type == Type::kPublish || r.type == Type::kSubscribe ||
                           r.type == Type::kFetch || r.type == Type::kTable ||
                           r.type == Type::kOwner;
  if (peer_ ? !(client_type || r.type == Type::kCopy) || r.type == Type::kSubscribe
            : !client_type) {
    return refuse(Refusal::kMalformed,
                  "type " + std::to_string(static_cast<int>(r.type)) +
                      " is not a request here; clients send PUBLISH, SUBSCRIBE, FETCH, TABLE "
                      "or OWNER");
  }
  if (!peer_ && !bucket_.Take(worker_.node().clock().Now())) {
    return refuse(Refusal::kRate, "more than " + std::to_string(static_cast<int>(o.rate)) +
                                      " requests per second on this connection; slow down or "
                                      "spread the load over more connections");
  }
  if (IsGroupRequest(r.type) && r.key.empty()) {
    return refuse(Refusal::kMalformed, "a group name is required (the frame's key)");
  }
  if (r.type == Type::kPublish && r.payload.size() > kMaxClip) {
    return refuse(Refusal::kTooLarge, "clip of " + std::to_string(r.payload.size()) +
                                          " bytes is over the limit of " +
                                          std::to_string(kMaxClip) + " (64 KiB); split it");
  }
  if (r.type == Type::kPublish && r.payload.empty()) {
    return refuse(Refusal::kMalformed, "an empty clip; send the clip's bytes as the payload");
  }
  return std::nullopt;
}

bool Connection::CopyHere(Frame& copy) {
  RelayNode& node = worker_.node();
  if (&node.worker(node.ShardOf(copy.key)) != &worker_) return false;
  if (auto refusal = Admit(copy)) {
    Send(std::move(*refusal));
    return true;
  }
  const uint64_t id = copy.request_id;
  Answer(worker_.Copy(std::move(copy)), id);
  return true;
}

asio::awaitable<void> Connection::Handle(std::shared_ptr<Connection> self, Frame request) {
  if (auto refusal = self->Admit(request)) {
    self->Send(std::move(*refusal));
    co_return;
  }
  const RingViewPtr view = self->worker_.view();
  const ring::Ring& r = view->ring;
  if (request.type == Type::kTable) {
    self->Send(TableFrame(request.request_id, r.version(), view->table));
    co_return;
  }
  if (request.type == Type::kCopy) {
    co_await Serve(self, std::move(request));
    co_return;
  }
  if (self->peer_ && request.type == Type::kFetch && request.code == kHandoffCode) {
    co_await HandOver(self, std::move(request));
    co_return;
  }
  if (r.empty()) {
    self->worker_.counters().refused.Add();
    self->Send(RefusalFrame(request, Refusal::kUnavailable,
                            "this node has no ring yet (the director has not sent a table, or no "
                            "relay node is active); retry shortly"));
    co_return;
  }
  const ring::RingId key = ring::KeyId(request.key);
  if (request.type == Type::kOwner) {
    self->Send(MemberFrame(Type::kOwnerReply, request.request_id, r.version(), r.Successor(key)));
    co_return;
  }
  const Route route = Decide(*view, request.type, key, request.version, self->peer_);
  if (route.kind == RouteKind::kUnavailable) {
    self->worker_.counters().refused.Add();
    self->Send(RefusalFrame(request, Refusal::kUnavailable,
                            "this node routes with ring version " + std::to_string(r.version()) +
                                ", older than the client's " + std::to_string(request.version) +
                                "; retry in a moment"));
  } else if (route.kind == RouteKind::kMoved) {
    self->worker_.counters().moved.Add();
    self->Send(MemberFrame(Type::kMoved, request.request_id, r.version(), r.member(route.member)));
  } else if (route.kind == RouteKind::kForward) {
    co_await Forward(self, std::move(request), route.member);
  } else {
    // The arc of a node that just joined: served once its clips are here.
    if (const Handoff* h = PendingHandoff(*view, key); h != nullptr) {
      co_await self->worker_.AwaitHandoff(*h);
    }
    co_await Serve(self, std::move(request));
  }
}

asio::awaitable<void> Connection::HandOver(std::shared_ptr<Connection> self, Frame request) {
  RelayNode& node = self->worker_.node();
  if (self->worker_.view()->ring.version() < request.version || request.payload.size() != 16) {
    self->Send(RefusalFrame(request, Refusal::kUnavailable,
                            "handoff: this node is not at ring version " +
                                std::to_string(request.version) + " yet; ask again"));
    co_return;
  }
  const ring::Arc arc{GetBigEndian(request.payload.data(), 8),
                      GetBigEndian(request.payload.data() + 8, 8)};
  std::vector<Frame> frames;
  std::vector<size_t> counts;
  for (size_t i = 0; i < node.workers(); ++i) {
    RelayWorker* shard = &node.worker(i);
    Result<std::vector<Frame>> part = *co_await asio::co_spawn(
        shard->io(), RunHandOver(shard, arc, request.version), asio::use_awaitable);
    if (!part.ok()) {  // the new owner asks again in a moment
      self->Send(RefusalFrame(request, Refusal::kUnavailable,
                              "handoff: " + std::string(part.status().message())));
      co_return;
    }
    counts.push_back(part->size());
    std::move(part->begin(), part->end(), std::back_inserter(frames));
  }
  for (size_t i = 0; i < counts.size(); ++i) {
    asio::co_spawn(node.worker(i).io(), RunCount(&node.worker(i), counts[i]), asio::detached);
  }
  Frame done;
  done.type = Type::kDone;
  done.seq = frames.size();
  frames.push_back(std::move(done));
  self->Answer(std::move(frames), request.request_id);
}

asio::awaitable<void> Connection::Forward(std::shared_ptr<Connection> self, Frame request,
                                          size_t next_hop) {
  RelayWorker& w = self->worker_;
  const RingViewPtr view = w.view();
  const ring::Member& next = view->ring.member(next_hop);
  w.counters().forwarded.Add();
  Frame onward = request;
  onward.hops = static_cast<uint16_t>(request.hops + 1);
  auto answer = co_await PeerLink::Call(w.Link(next), std::move(onward));
  const bool unavailable =
      !answer.ok() || (answer->back().type == Type::kRefused &&
                       answer->back().code == static_cast<uint8_t>(Refusal::kUnavailable));
  if (!unavailable) {
    self->Answer(std::move(answer).value(), request.request_id);
    co_return;
  }
  // The owner cannot be reached. A node holding the group's copies takes it over until the
  // director's next table says who owns it.
  if (HoldsCopies(*view, ring::KeyId(request.key), w.node().options().replicas)) {
    w.counters().takeovers.Add();
    co_await Serve(self, std::move(request), true);
    co_return;
  }
  w.counters().refused.Add();
  const std::string why =
      answer.ok() ? PayloadText(answer->back()) : std::string(answer.status().message());
  self->Send(RefusalFrame(request, Refusal::kUnavailable,
                          "the owner of group '" + request.key + "' cannot be reached via " +
                              next.name + " (" + EndpointText(next) + "): " + why +
                              "; refresh the ring table and retry"));
}

asio::awaitable<void> Connection::Serve(std::shared_ptr<Connection> self, Frame request,
                                        bool takeover) {
  RelayNode& node = self->worker_.node();
  RelayWorker* shard = &node.worker(node.ShardOf(request.key));
  const uint64_t id = request.request_id;
  std::vector<Frame> frames;
  switch (request.type) {
    case Type::kPublish:
      frames = co_await asio::co_spawn(
          shard->io(),
          RelayWorker::Publish(shard, std::move(request), self->worker_.view(), takeover),
          asio::use_awaitable);
      break;
    case Type::kFetch:
      frames = co_await asio::co_spawn(shard->io(), RunFetch(shard, std::move(request)),
                                       asio::use_awaitable);
      break;
    case Type::kCopy:
      frames = co_await asio::co_spawn(shard->io(), RunCopy(shard, std::move(request)),
                                       asio::use_awaitable);
      break;
    default: {  // kSubscribe
      const SubscriberId sid = self->worker_.NextSubscriberId();
      const std::string group = request.key;
      // Named, not a temporary in the co_await expression: GCC 12 destroyed that temporary
      // twice, releasing the connection's weak count once too often (heap corruption when the
      // subscriber's connection closed; found by valgrind under `vsc demo --ring`).
      const Sink sink{&self->worker_, self};
      frames = co_await asio::co_spawn(
          shard->io(), RunSubscribe(shard, std::move(request), sid, sink), asio::use_awaitable);
      if (frames.empty()) {
        if (self->closed_) {  // closed while subscribing: undo at once
          asio::post(shard->io(), [shard, group, sid] { shard->Unsubscribe(group, sid); });
        } else {
          self->subscriptions_.emplace_back(group, sid);
        }
      }
    }
  }
  self->Answer(std::move(frames), id);
}

}  // namespace vsc::relay
