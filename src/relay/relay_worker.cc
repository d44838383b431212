#include "relay/relay_worker.h"

#include <spdlog/spdlog.h>

#include <asio/experimental/as_tuple.hpp>
#include <iterator>
#include <limits>

#include "common/big_endian.h"
#include "relay/relay_connection.h"
#include "ring/id.h"

namespace vsc::relay {

Frame ClipFrame(uint64_t request_id, const std::string& group, const StoredClip& clip) {
  Frame f;
  f.type = Type::kClip;
  f.request_id = request_id;
  f.seq = clip.seq;
  f.key = group;
  f.payload = *clip.bytes;
  return f;
}

namespace {

GroupLimits WorkerLimits(GroupLimits limits, size_t workers) {
  limits.max_groups = std::max<size_t>(1, (limits.max_groups + workers - 1) / workers);
  return limits;
}

// Restored copies go to a new successor pipelined on the peer link, up to this many COPY
// requests in flight (one at a time, a full buffer of 1,024 clips took 1,024 round trips).
constexpr size_t kCopyWindow = 32;

// The restore of an arc's clips to one member; its senders run on one worker.
struct CopyBatch {
  explicit CopyBatch(asio::io_context& io) : done(io) {}
  std::shared_ptr<const std::vector<Frame>> copies;
  size_t next = 0, sent = 0, running = 0;
  std::string failure;      // the first failure; no new copy is sent after it
  asio::steady_timer done;  // cancelled when the last sender ends
};

// A publish's copies, sent to every successor at once: the ack waits for the slowest one
// round trip, not for one round trip per successor.
struct CopyJoin {
  CopyJoin(asio::io_context& io, size_t n)
      : left(n), answers(n, Unavailable("copy not sent")), done(io) {}
  size_t left;
  std::vector<Result<std::vector<Frame>>> answers;
  asio::steady_timer done;  // cancelled when the last answer is in
};

// One sender of the window: the next copy until none is left or one failed.
asio::awaitable<void> SendCopies(std::shared_ptr<PeerLink> link, std::shared_ptr<CopyBatch> b) {
  while (b->failure.empty() && b->next < b->copies->size()) {
    Frame copy = (*b->copies)[b->next++];
    auto answer = co_await PeerLink::Call(link, std::move(copy));
    if (!answer.ok() || answer->back().type != Type::kCopyAck) {
      if (b->failure.empty()) {
        b->failure =
            answer.ok() ? PayloadText(answer->back()) : std::string(answer.status().message());
      }
      break;
    }
    ++b->sent;
  }
  if (--b->running == 0) b->done.cancel();
}

}  // namespace

RelayWorker::RelayWorker(RelayNode& node, size_t index, asio::io_context& io)
    : node_(node),
      index_(index),
      io_(io),
      view_(MakeRingView({}, {}, node.options().name)),
      groups_(WorkerLimits(node.options().groups, node.workers_hint())) {}

RelayWorker::~RelayWorker() = default;

Status RelayWorker::Listen(const asio::ip::address& address, uint16_t port) {
  VSC_ASSIGN_OR_RETURN(listener_,
                       net::TcpListener::Listen(io_, asio::ip::tcp::endpoint(address, port), true));
  listener_->Start([this](asio::ip::tcp::socket socket) {
    auto c = std::make_shared<Connection>(*this, std::move(socket));
    asio::co_spawn(io_, Connection::Run(c), asio::detached);
  });
  return Status::Ok();
}

void RelayWorker::Stop() {
  stopping_ = true;
  if (listener_) listener_->Stop();
  for (auto& [p, weak] : connections_) {
    if (auto c = weak.lock()) c->Close();
  }
  for (auto& [name, link] : links_) link->Close();
  links_.clear();
}

void RelayWorker::Track(const std::shared_ptr<Connection>& c) { connections_[c.get()] = c; }
void RelayWorker::Untrack(const Connection* c) { connections_.erase(c); }

void RelayWorker::SetView(RingViewPtr view) {
  if (view->ring.version() < view_->ring.version()) return;
  view_ = std::move(view);
  MoveSubscribers();
  // Links to nodes that left, or moved, are of no more use.
  for (auto it = links_.begin(); it != links_.end();) {
    const size_t i = view_->ring.IndexOf(it->first);
    const bool gone =
        i == view_->ring.size() || it->second->peer().port() != view_->ring.member(i).endpoint.port;
    if (gone) {
      it->second->Close();
      it = links_.erase(it);
    } else {
      ++it;
    }
  }
}

std::shared_ptr<PeerLink> RelayWorker::Link(const ring::Member& m) {
  auto it = links_.find(m.name);
  if (it != links_.end() && !it->second->broken()) return it->second;
  asio::error_code ec;
  auto address = asio::ip::make_address(m.endpoint.host, ec);
  if (ec) address = asio::ip::make_address_v4("127.0.0.1");  // refused by the endpoint check
  auto link = std::make_shared<PeerLink>(io_, node_.key(), node_.options().name,
                                         asio::ip::tcp::endpoint(address, m.endpoint.port),
                                         node_.options().peer_timeout, node_.clock());
  links_[m.name] = link;
  return link;
}

asio::awaitable<std::vector<Frame>> RelayWorker::Publish(RelayWorker* self, Frame request,
                                                         RingViewPtr decided, bool takeover) {
  const std::string group = request.key;
  const ring::RingId key = ring::KeyId(group);
  const RingViewPtr view =
      decided != nullptr && decided->ring.version() > self->view_->ring.version()
          ? std::move(decided)
          : self->view_;
  if (!takeover && view->member()) {
    // The connection routed with an older view, or the arc was handed over meanwhile.
    const size_t owner = view->ring.SuccessorIndex(key);
    if (owner != view->self) {
      co_return std::vector<Frame>{MemberFrame(Type::kMoved, request.request_id,
                                               view->ring.version(), view->ring.member(owner))};
    }
  }
  auto bytes = std::make_shared<const std::vector<uint8_t>>(std::move(request.payload));
  auto seq = self->groups_.Append(group, bytes);
  if (!seq.ok()) {
    self->counters_.refused.Add();
    co_return std::vector<Frame>{RefusalFrame(request, Refusal::kGroups, seq.status().message())};
  }
  self->counters_.publishes.Add();
  // Copies first: the clip is acked, and seen by subscribers, only once it survives its owner.
  std::vector<size_t> targets;
  for (size_t i : view->ring.SuccessorList(key, self->node_.options().replicas)) {
    if (i != view->self) targets.push_back(i);
  }
  auto join = std::make_shared<CopyJoin>(self->io_, targets.size());
  join->done.expires_at(asio::steady_timer::time_point::max());
  for (size_t k = 0; k < targets.size(); ++k) {
    Frame copy;
    copy.type = Type::kCopy;
    copy.key = group;
    copy.seq = *seq;
    copy.payload = *bytes;
    // Answered from the link's reader: no coroutine per copy; the last answer wakes this one.
    self->Link(view->ring.member(targets[k]))
        ->Start(std::move(copy), [join, k](PeerLink::Answer answer) {
          join->answers[k] = std::move(answer);
          if (--join->left == 0) join->done.cancel();
        });
  }
  // A broken link answers at once, so every answer may be in already.
  if (join->left > 0) {
    co_await join->done.async_wait(asio::experimental::as_tuple(asio::use_awaitable));
  }
  const size_t others = targets.size();
  size_t copied = 0;
  std::string failures;
  for (size_t k = 0; k < targets.size(); ++k) {
    const auto& answer = join->answers[k];
    if (answer.ok() && answer->back().type == Type::kCopyAck) {
      ++copied;
    } else {
      failures += (failures.empty() ? "" : "; ") + view->ring.member(targets[k]).name + ": " +
                  (answer.ok() ? PayloadText(answer->back()) : answer.status().message());
    }
  }
  self->Deliver(group, self->groups_.Commit(group, *seq));
  if (others > 0 && copied == 0) {
    self->counters_.refused.Add();
    co_return std::vector<Frame>{
        RefusalFrame(request, Refusal::kUnavailable,
                     "clip stored on its owner only, not acked: no successor took a copy (" +
                         failures + "); publish again")};
  }
  Frame ack;
  ack.type = Type::kAck;
  ack.request_id = request.request_id;
  ack.key = group;
  ack.seq = *seq;
  ack.hops = request.hops;
  ack.code = static_cast<uint8_t>(copied);
  ack.version = view->ring.version();
  co_return std::vector<Frame>{std::move(ack)};
}

std::vector<Frame> RelayWorker::Copy(Frame request) {
  auto bytes = std::make_shared<const std::vector<uint8_t>>(std::move(request.payload));
  auto stored = groups_.Insert(request.key, request.seq, bytes);
  if (!stored.ok()) return {RefusalFrame(request, Refusal::kGroups, stored.status().message())};
  if (*stored) counters_.copies.Add();
  Frame ack;
  ack.type = Type::kCopyAck;
  ack.request_id = request.request_id;
  ack.key = request.key;
  ack.seq = request.seq;
  return {std::move(ack)};
}

std::vector<Frame> RelayWorker::Fetch(const Frame& request) {
  counters_.fetches.Add();
  bool gone = false;
  std::vector<Frame> out;
  for (const StoredClip& c :
       groups_.Fetch(request.key, request.seq, node_.options().fetch_max, &gone)) {
    out.push_back(ClipFrame(request.request_id, request.key, c));
  }
  Frame done;
  done.type = Type::kDone;
  done.request_id = request.request_id;
  done.key = request.key;
  done.seq = groups_.Visible(request.key);
  done.hops = request.hops;
  done.version = view_->ring.version();
  if (gone) {
    done.code = static_cast<uint8_t>(Refusal::kGone);
    done.payload = TextPayload("clips after seq " + std::to_string(request.seq) +
                               " were dropped from the bounded buffer; the oldest held follow");
  }
  out.push_back(std::move(done));
  return out;
}

std::vector<Frame> RelayWorker::Subscribe(const Frame& request, SubscriberId id, Sink sink) {
  if (Status s = groups_.Subscribe(request.key, id); !s.ok()) {
    counters_.refused.Add();
    return {RefusalFrame(request, Refusal::kSubscribers, s.message())};
  }
  counters_.subscribes.Add();
  sinks_[id] = sink;
  // The backlog goes the way live clips go, so it reaches the subscriber before them.
  std::vector<StoredClip> backlog =
      groups_.Fetch(request.key, request.seq, std::numeric_limits<size_t>::max());
  std::vector<std::vector<uint8_t>> frames;
  for (const StoredClip& c : backlog) frames.push_back(EncodeFrame(ClipFrame(0, request.key, c)));
  if (!frames.empty()) {
    asio::post(sink.worker->io(), [weak = sink.connection, frames = std::move(frames)] {
      if (auto c = weak.lock()) {
        for (const auto& f : frames) c->SendEncoded(f);
      }
    });
  }
  return {};
}

void RelayWorker::Unsubscribe(const std::string& group, SubscriberId id) {
  groups_.Unsubscribe(group, id);
  sinks_.erase(id);
}

void RelayWorker::Deliver(const std::string& group, const std::vector<StoredClip>& clips) {
  if (clips.empty()) return;
  std::vector<SubscriberId> ids = groups_.Subscribers(group);
  if (ids.empty()) return;
  auto frames = std::make_shared<std::vector<std::vector<uint8_t>>>();
  for (const StoredClip& c : clips) frames->push_back(EncodeFrame(ClipFrame(0, group, c)));
  for (SubscriberId id : ids) {
    auto it = sinks_.find(id);
    if (it == sinks_.end()) continue;
    counters_.delivered.Add(clips.size());
    asio::post(it->second.worker->io(), [weak = it->second.connection, frames] {
      if (auto c = weak.lock()) {
        for (const auto& f : *frames) c->SendEncoded(f);
      }
    });
  }
}

Result<std::vector<Frame>> RelayWorker::HandOverArc(const ring::Arc& arc, uint64_t version) {
  if (view_->ring.version() < version) {
    return Unavailable("worker " + std::to_string(index_) + " routes with ring version " +
                       std::to_string(view_->ring.version()) + ", not " + std::to_string(version) +
                       " yet; ask again");
  }
  std::vector<Frame> out;
  for (const std::string& group : groups_.Groups()) {
    if (!arc.Contains(ring::KeyId(group))) continue;
    if (groups_.Pending(group)) {
      return Unavailable("a clip of group '" + group + "' is still being copied; ask again");
    }
    for (const StoredClip& c : groups_.Fetch(group, 0, std::numeric_limits<size_t>::max())) {
      out.push_back(ClipFrame(0, group, c));
    }
  }
  return out;
}

std::vector<Frame> RelayWorker::HeldInArc(const ring::Arc& arc) {
  std::vector<Frame> out;
  for (const std::string& group : groups_.Groups()) {
    if (!arc.Contains(ring::KeyId(group))) continue;
    for (const StoredClip& c : groups_.Held(group)) {
      out.push_back(ClipFrame(0, group, c));
      out.back().type = Type::kCopy;
    }
  }
  return out;
}

std::vector<Frame> RelayWorker::InsertClip(Frame clip) {
  auto bytes = std::make_shared<const std::vector<uint8_t>>(std::move(clip.payload));
  (void)groups_.Insert(clip.key, clip.seq, std::move(bytes));
  return {};
}

namespace {

asio::awaitable<std::vector<Frame>> RunInsert(RelayWorker* shard, Frame clip) {
  co_return shard->InsertClip(std::move(clip));
}

asio::awaitable<std::vector<Frame>> RunHeld(RelayWorker* shard, ring::Arc arc) {
  co_return shard->HeldInArc(arc);
}

std::string ArcText(const ring::Arc& arc) {
  return "(" + ring::IdHex(arc.start) + ", " + ring::IdHex(arc.end) + "]";
}

}  // namespace

asio::awaitable<void> RelayWorker::PullArc(RelayWorker* self, Handoff handoff, RingViewPtr view) {
  RelayNode& node = self->node_;
  const size_t from = view->ring.IndexOf(handoff.from);
  Frame pull;
  pull.type = Type::kFetch;
  pull.code = kHandoffCode;
  pull.version = view->ring.version();
  PutBigEndian(pull.payload, handoff.arc.start, 8);
  PutBigEndian(pull.payload, handoff.arc.end, 8);
  pull.key = "handoff";
  Result<std::vector<Frame>> answer = Unavailable("not asked");
  asio::steady_timer pause(self->io_);
  // The previous owner answers once it has this ring too (it stops taking the arc's clips)
  // and every clip of the arc it took before is copied: up to r - 1 peer timeouts.
  const TimePoint give_up =
      node.clock().Now() + node.options().replicas * node.options().peer_timeout;
  while (from < view->ring.size()) {
    answer = co_await PeerLink::Call(self->Link(view->ring.member(from)), pull);
    if (!answer.ok() || answer->back().type == Type::kDone || node.clock().Now() > give_up) break;
    pause.expires_after(std::chrono::milliseconds(20));
    co_await pause.async_wait(asio::use_awaitable);
  }
  size_t clips = 0;
  if (answer.ok() && answer->back().type == Type::kDone) {
    for (Frame& f : *answer) {
      if (f.type != Type::kClip) continue;
      RelayWorker* shard = &node.worker(node.ShardOf(f.key));
      co_await asio::co_spawn(shard->io(), RunInsert(shard, std::move(f)), asio::use_awaitable);
      ++clips;
    }
    spdlog::info("relay {}: took over arc {} from {} with {} clip(s)", node.options().name,
                 ArcText(handoff.arc), handoff.from, clips);
  } else {
    spdlog::warn("relay {}: could not pull arc {} from {}: {}; serving the copies held",
                 node.options().name, ArcText(handoff.arc), handoff.from,
                 answer.ok() ? PayloadText(answer->back()) : answer.status().message());
  }
  handoff.state->done = true;
  const HandoffState* state = handoff.state.get();
  for (size_t i = 0; i < node.workers(); ++i) {
    RelayWorker* w = &node.worker(i);
    asio::post(w->io(), [w, state, keep = handoff.state] { w->WakeHandoff(state); });
  }
}

asio::awaitable<void> RelayWorker::RestoreCopies(RelayWorker* self, CopyOrder order,
                                                 RingViewPtr view) {
  for (const Handoff& h : view->handoffs) co_await self->AwaitHandoff(h);
  RelayNode& node = self->node_;
  std::vector<Frame> copies;
  for (size_t i = 0; i < node.workers(); ++i) {
    RelayWorker* shard = &node.worker(i);
    std::vector<Frame> part =
        co_await asio::co_spawn(shard->io(), RunHeld(shard, order.arc), asio::use_awaitable);
    std::move(part.begin(), part.end(), std::back_inserter(copies));
  }
  auto all = std::make_shared<const std::vector<Frame>>(std::move(copies));
  for (const std::string& name : order.to) {
    const size_t m = view->ring.IndexOf(name);
    if (m == view->ring.size() || all->empty()) continue;
    auto batch = std::make_shared<CopyBatch>(self->io_);
    batch->copies = all;
    batch->done.expires_at(asio::steady_timer::time_point::max());
    const std::shared_ptr<PeerLink> link = self->Link(view->ring.member(m));
    const TimePoint began = node.clock().Now();
    const size_t window = std::min(kCopyWindow, all->size());
    batch->running = window;
    for (size_t k = 0; k < window; ++k) {
      asio::co_spawn(self->io_, SendCopies(link, batch), asio::detached);
    }
    if (batch->running > 0) {
      co_await batch->done.async_wait(asio::experimental::as_tuple(asio::use_awaitable));
    }
    const size_t sent = batch->sent;
    const std::string failure = batch->failure;
    self->counters_.restored.Add(sent);
    if (failure.empty()) {
      spdlog::info("relay {}: copied {} clip(s) of arc {} to its new successor {} in {:.1f} ms",
                   node.options().name, sent, ArcText(order.arc), name,
                   ToMillis(node.clock().Now() - began));
    } else {
      spdlog::warn(
          "relay {}: copied {} of {} clip(s) of arc {} to its new successor {}: {}; "
          "the clips published from now on are copied there",
          node.options().name, sent, all->size(), ArcText(order.arc), name, failure);
    }
  }
}

asio::awaitable<void> RelayWorker::AwaitHandoff(const Handoff& h) {
  if (h.state->done) co_return;
  auto timer = std::make_shared<asio::steady_timer>(io_);
  timer->expires_after((node_.options().replicas + 1) * node_.options().peer_timeout);
  waiters_[h.state.get()].push_back(timer);
  co_await timer->async_wait(asio::experimental::as_tuple(asio::use_awaitable));
}

void RelayWorker::WakeHandoff(const HandoffState* state) {
  auto it = waiters_.find(state);
  if (it == waiters_.end()) return;
  for (auto& t : it->second) t->cancel();
  waiters_.erase(it);
}

void RelayWorker::MoveSubscribers() {
  if (view_->ring.empty()) return;
  for (const std::string& group : groups_.SubscribedGroups()) {
    const ring::Member& owner = view_->ring.Successor(ring::KeyId(group));
    if (owner.name == node_.options().name) continue;
    const std::vector<uint8_t> bytes =
        EncodeFrame(MemberFrame(Type::kMoved, 0, view_->ring.version(), owner));
    for (SubscriberId id : groups_.Subscribers(group)) {
      if (auto it = sinks_.find(id); it != sinks_.end()) {
        asio::post(it->second.worker->io(), [weak = it->second.connection, bytes] {
          if (auto c = weak.lock()) c->SendEncoded(bytes);
        });
      }
      Unsubscribe(group, id);
    }
  }
}

}  // namespace vsc::relay
