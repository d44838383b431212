// PeerLink: this node's authenticated connection to one other ring node, for forwards and
// copies (peer_auth.h has the handshake and the tags). Requests are pipelined: Call() writes a
// sealed frame and waits for the answer frames with its request id, up to the terminal one
// (ACK, DONE, MOVED, REFUSED, COPY_ACK, TABLE, OWNER); CLIP frames before it are collected.
// A link that fails (connect, handshake, authentication, the peer closing, the timeout) fails
// every call waiting on it and stays broken: the owner drops it and makes a new one.
//
// Thread: one worker's io_context; every method runs there.
#pragma once

#include <asio.hpp>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "net/outbox.h"
#include "proto/cluster_key.h"
#include "relay/clip_codec.h"
#include "relay/peer_auth.h"

namespace vsc::relay {

class PeerLink : public std::enable_shared_from_this<PeerLink> {
 public:
  PeerLink(asio::io_context& io, const proto::ClusterKey& key, std::string self_name,
           asio::ip::tcp::endpoint peer, std::chrono::milliseconds timeout);

  // The answer frames to `request` (its request id is replaced by the link's own), the
  // terminal one last; Unavailable naming the peer when the link fails or the answer does not
  // come within the timeout.
  static asio::awaitable<Result<std::vector<Frame>>> Call(std::shared_ptr<PeerLink> self,
                                                          Frame request);
  bool broken() const { return broken_; }
  const asio::ip::tcp::endpoint& peer() const { return peer_; }
  void Close();

 private:
  struct Pending {
    explicit Pending(asio::io_context& io) : done(io) {}
    asio::steady_timer done;  // cancelled when the answer is complete or the link fails
    std::vector<Frame> frames;
    bool complete = false;
  };
  static asio::awaitable<void> Connect(std::shared_ptr<PeerLink> self);
  static asio::awaitable<void> Reader(std::shared_ptr<PeerLink> self);
  // The first frame: the acceptor's challenge. False (the link failed) when it does not verify.
  bool OnChallenge(Frame& f);
  void Fail(const std::string& why);
  void Send(Frame frame);

  asio::io_context& io_;
  const proto::ClusterKey& key_;
  std::string self_name_;
  asio::ip::tcp::endpoint peer_;
  std::chrono::milliseconds timeout_;
  std::shared_ptr<asio::ip::tcp::socket> socket_;
  std::shared_ptr<net::Outbox> outbox_;
  proto::Nonce nonce_{};
  std::unique_ptr<PeerSealer> sealer_;
  std::unique_ptr<PeerOpener> opener_;
  bool started_ = false;
  bool ready_ = false;  // handshake done
  bool broken_ = false;
  std::string failure_;
  std::deque<Frame> before_ready_;  // requests queued during the handshake
  uint64_t next_id_ = 1;
  std::map<uint64_t, std::shared_ptr<Pending>> pending_;
};

}  // namespace vsc::relay
