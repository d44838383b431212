// PeerLink: this node's authenticated connection to one other ring node, for forwards and
// copies (peer_auth.h has the handshake and the tags). Requests are pipelined: Start() writes a
// sealed frame and collects the answer frames with its request id, up to the terminal one
// (ACK, DONE, MOVED, REFUSED, COPY_ACK, TABLE, OWNER; CLIP frames come before it), then hands
// them to its callback; Call() is the same for a coroutine. A link that fails (connect,
// handshake, authentication, the peer closing, a request unanswered within the timeout) fails
// every request waiting on it and stays broken: the owner drops it and makes a new one.
//
// Thread: one worker's io_context; every method runs there.
#pragma once

#include <asio.hpp>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "net/outbox.h"
#include "proto/cluster_key.h"
#include "relay/clip_codec.h"
#include "relay/peer_auth.h"

namespace vsc::relay {

class PeerLink : public std::enable_shared_from_this<PeerLink> {
 public:
  PeerLink(asio::io_context& io, const proto::ClusterKey& key, std::string self_name,
           asio::ip::tcp::endpoint peer, std::chrono::milliseconds timeout, const Clock& clock);

  // The answer frames to a request, the terminal one last; Unavailable naming the peer when the
  // link fails or the answer does not come within the timeout.
  using Answer = Result<std::vector<Frame>>;
  using Done = std::function<void(Answer)>;
  // Sends `request` (its request id is replaced by the link's own); `done` runs once, on this
  // thread, with the answer: from the link's reader, its timeout, or at once when the link is
  // broken already. No coroutine and no timer per request (a publish's copies go this way).
  void Start(Frame request, Done done);
  static asio::awaitable<Answer> Call(std::shared_ptr<PeerLink> self, Frame request);
  bool broken() const { return broken_; }
  const asio::ip::tcp::endpoint& peer() const { return peer_; }
  void Close();

 private:
  struct Pending {
    Done done;
    TimePoint deadline;
    std::vector<Frame> frames;
  };
  static asio::awaitable<void> Connect(std::shared_ptr<PeerLink> self);
  static asio::awaitable<void> Reader(std::shared_ptr<PeerLink> self);
  // The first frame: the acceptor's challenge. False (the link failed) when it does not verify.
  bool OnChallenge(Frame& f);
  // An answer frame: collected, and its request done at the terminal one.
  void OnAnswer(Frame f);
  void Fail(const std::string& why);
  void Send(Frame frame);
  // One timer for the link, set to the oldest request's deadline (requests are numbered in the
  // order they are sent, all with the same timeout): when it passes unanswered, the link fails.
  void ArmTimeout();
  void OnTimeout();

  asio::io_context& io_;
  const proto::ClusterKey& key_;
  std::string self_name_;
  asio::ip::tcp::endpoint peer_;
  std::chrono::milliseconds timeout_;
  const Clock& clock_;
  asio::steady_timer timeout_timer_;
  bool timeout_armed_ = false;
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
  std::map<uint64_t, Pending> pending_;  // by request id: the oldest first
};

}  // namespace vsc::relay
