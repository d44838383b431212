// Connection: one TCP connection to a relay node, from a client or from another ring node
// (which starts with PEER_HELLO and is authenticated from then on: peer_auth.h). Each request
// is handled by a coroutine of its own, so requests are pipelined and answered out of order,
// matched by request id; subscription clips (request id 0) come in seq order. A client is
// bounded by the node's request rate per connection, its clip size and the shard's group and
// subscriber bounds; each refusal is a REFUSED frame with the reason. A subscriber whose
// unwritten backlog passes max_backlog is dropped (its connection closed: it resubscribes
// from its last seq).
//
// Thread: the worker that accepted it.
#pragma once

#include <asio.hpp>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "net/outbox.h"
#include "relay/clip_codec.h"
#include "relay/peer_auth.h"
#include "relay/rate_limit.h"
#include "relay/relay_worker.h"

namespace vsc::relay {

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(RelayWorker& worker, asio::ip::tcp::socket socket);

  static asio::awaitable<void> Run(std::shared_ptr<Connection> self);
  // Answers and clips, sealed on a peer connection.
  void Send(Frame frame);
  // A subscription clip encoded once for every subscriber (clients only subscribe).
  void SendEncoded(const std::vector<uint8_t>& frame);
  void Close();

 private:
  static asio::awaitable<void> Handle(std::shared_ptr<Connection> self, Frame request);
  // A peer's COPY of a group of this worker's shard, answered at once, before the next frame is
  // read: no coroutine and no post (the copy is on every publish's path). False when another
  // worker owns the group (Handle serves it there).
  bool CopyHere(Frame& copy);
  // The group's request, served by this node: on the group's worker. `takeover`: for an owner
  // that cannot be reached (relay_worker.h Publish).
  static asio::awaitable<void> Serve(std::shared_ptr<Connection> self, Frame request,
                                     bool takeover = false);
  // A peer's FETCH with kHandoffCode: every clip of the arc, from every shard.
  static asio::awaitable<void> HandOver(std::shared_ptr<Connection> self, Frame request);
  static asio::awaitable<void> Forward(std::shared_ptr<Connection> self, Frame request,
                                       size_t next_hop);
  // First frame of a peer: answer the challenge. False when the hello is malformed.
  bool AcceptPeer(const Frame& hello);
  // Refuses requests this kind of connection may not send, the rate, an oversized clip.
  std::optional<Frame> Admit(const Frame& request);
  void Answer(std::vector<Frame> frames, uint64_t request_id);

  RelayWorker& worker_;
  std::shared_ptr<asio::ip::tcp::socket> socket_;
  std::shared_ptr<net::Outbox> outbox_;
  TokenBucket bucket_;
  bool peer_ = false;
  std::string peer_name_;
  std::optional<PeerSealer> sealer_;
  std::optional<PeerOpener> opener_;
  std::vector<std::pair<std::string, SubscriberId>> subscriptions_;
  bool closed_ = false;
};

}  // namespace vsc::relay
