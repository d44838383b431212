// RelayWorker: one worker's part of a RelayNode (relay_node.h): its listener and connections,
// its shard of the groups (a GroupTable and the subscribers' sinks), its links to the other
// ring nodes, and its copy of the ring view. Shard operations run on this worker's thread and
// answer with the frames to send; a connection on another worker reaches them with co_spawn
// onto this worker's io_context.
//
// Thread: this worker's io_context; every method runs there (Listen before it runs).
#pragma once

#include <asio.hpp>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "net/tcp_listener.h"
#include "relay/answers.h"
#include "relay/clip_codec.h"
#include "relay/group_table.h"
#include "relay/peer_link.h"
#include "relay/relay_node.h"
#include "relay/ring_view.h"

namespace vsc::relay {

class Connection;

// Where a subscriber's clips go: its connection, on the connection's worker.
struct Sink {
  RelayWorker* worker = nullptr;
  std::weak_ptr<Connection> connection;
};

class RelayWorker {
 public:
  RelayWorker(RelayNode& node, size_t index, asio::io_context& io);
  ~RelayWorker();

  Status Listen(const asio::ip::address& address, uint16_t port);
  uint16_t port() const { return listener_ ? listener_->local_port() : 0; }
  void Stop();
  void SetView(RingViewPtr view);
  const RingViewPtr& view() const { return view_; }

  asio::io_context& io() { return io_; }
  RelayNode& node() { return node_; }
  size_t index() const { return index_; }
  RelayCounters& counters() { return counters_; }
  const RelayCounters& counters() const { return counters_; }

  // The shard (this worker owns the request's group). Answers: ACK | REFUSED for a publish,
  // COPY_ACK for a copy, CLIP... DONE | REFUSED for a fetch, CLIP... (the backlog after
  // `seq`) | REFUSED for a subscribe, whose later clips go to `sink`.
  // A publish is served with the newer of this shard's view and `decided` (the view the
  // connection routed with): when that view gives the group to another node — this node handed
  // its arc over — the answer is MOVED, unless `takeover` (the owner cannot be reached).
  static asio::awaitable<std::vector<Frame>> Publish(RelayWorker* self, Frame request,
                                                     RingViewPtr decided, bool takeover);
  std::vector<Frame> Copy(Frame request);
  std::vector<Frame> Fetch(const Frame& request);
  std::vector<Frame> Subscribe(const Frame& request, SubscriberId id, Sink sink);
  void Unsubscribe(const std::string& group, SubscriberId id);
  // Every clip this shard holds of groups in the arc (start, end], as CLIP frames, for the node
  // that takes the arc over at ring `version`. Unavailable (ask again) until this shard routes
  // with that version — from then on it takes no publish of the arc — and while a publish of
  // the arc is still being copied, so the clips handed over include every clip acked here.
  Result<std::vector<Frame>> HandOverArc(const ring::Arc& arc, uint64_t version);
  void CountHandedOver(size_t clips) { counters_.handed_over.Add(clips); }
  // Every clip held of groups in the arc, pending ones too, as COPY frames.
  std::vector<Frame> HeldInArc(const ring::Arc& arc);
  std::vector<Frame> InsertClip(Frame clip);  // a handed-over clip into this shard

  // Handoffs (this node took an arc over): pulls the arc's clips from the previous owner into
  // the shards, then marks it done and wakes every worker's waiters. Runs on worker 0.
  static asio::awaitable<void> PullArc(RelayWorker* self, Handoff handoff, RingViewPtr view);
  // After a ring change (PlanCopies): sends the clips this node holds of the order's arc to
  // each member that joined the arc's successor list, once the view's handoffs are done (the
  // clips of an arc this node pulled are sent too), pipelined: up to 32 COPY requests in
  // flight per member. Runs on worker 0.
  static asio::awaitable<void> RestoreCopies(RelayWorker* self, CopyOrder order, RingViewPtr view);
  // Waits until `h` is done (or r + 1 peer timeouts passed, one more than PullArc tries for:
  // then the node serves what it has).
  asio::awaitable<void> AwaitHandoff(const Handoff& h);
  void WakeHandoff(const HandoffState* state);

  // This worker's link to ring member m, made on first use and again after a failure.
  std::shared_ptr<PeerLink> Link(const ring::Member& m);
  SubscriberId NextSubscriberId() { return (uint64_t{index_} << 48) | ++next_subscriber_; }

  void Track(const std::shared_ptr<Connection>& c);
  void Untrack(const Connection* c);

 private:
  // Sends each clip to the group's subscribers (on their connections' workers).
  void Deliver(const std::string& group, const std::vector<StoredClip>& clips);
  // Subscribers of groups this node no longer owns are told MOVED and dropped: they
  // resubscribe at the new owner from their last seq.
  void MoveSubscribers();

  RelayNode& node_;
  size_t index_;
  asio::io_context& io_;
  RelayCounters counters_;
  RingViewPtr view_;
  std::unique_ptr<net::TcpListener> listener_;
  GroupTable groups_;
  std::map<SubscriberId, Sink> sinks_;
  std::map<std::string, std::shared_ptr<PeerLink>> links_;  // by member name
  std::map<const Connection*, std::weak_ptr<Connection>> connections_;
  uint64_t next_subscriber_ = 0;
  std::map<const HandoffState*, std::vector<std::shared_ptr<asio::steady_timer>>> waiters_;
  bool stopping_ = false;
};

// A clip frame: of a subscription (request id 0) or of a fetch answer.
Frame ClipFrame(uint64_t request_id, const std::string& group, const StoredClip& clip);

}  // namespace vsc::relay
