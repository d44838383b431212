// Outbox: the one writer of a TCP session (CONVENTIONS: "a session has exactly one writer
// coroutine draining its queue"). Anyone on the session's thread Push()es whole frames; the
// writer coroutine (Run) writes them in order, coalescing whatever accumulated while the
// previous write was in flight into one write.
//
// Thread: the io_context's single thread. Lifetime: shared by the session and its writer; the
// writer ends after Close() or a write error (which also closes the socket, so the session's
// reader sees the end too).
#pragma once

#include <asio.hpp>

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

namespace vsc::net {

class Outbox {
 public:
  explicit Outbox(std::shared_ptr<asio::ip::tcp::socket> socket);

  // Queues bytes (already framed). Ignored once closed.
  void Push(std::span<const uint8_t> bytes);
  // Stops the writer after the current write; what is still queued is dropped.
  void Close();
  // Writes what is queued, then closes the socket (a refusal that must reach the peer).
  void CloseWhenDrained();
  bool closed() const { return closed_; }
  // Bytes queued and not yet handed to the socket.
  size_t queued_bytes() const { return pending_.size(); }

  static asio::awaitable<void> Run(std::shared_ptr<Outbox> self);

 private:
  std::shared_ptr<asio::ip::tcp::socket> socket_;
  asio::steady_timer wake_;
  std::vector<uint8_t> pending_;
  std::vector<uint8_t> writing_;
  bool closed_ = false;
  bool close_when_drained_ = false;
};

}  // namespace vsc::net
