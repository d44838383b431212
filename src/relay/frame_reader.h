// ReadFrames: the one read loop of every framed clip-relay connection (docs/protocol.md "Clip
// relay"): a relay node's clients and peers, its peer links, the director's ring port and its
// upstreams to the owners. Reads the socket into a 64 KiB buffer, decodes with a FrameDecoder
// and hands each whole frame, in order, to `on_frame(Frame) -> bool`, which returns false to
// stop reading. Ends when the socket fails or closes (`ec`), the bytes do not decode (`status`,
// the decoder's reason), or on_frame stops; the result says which.
//
// Thread: the socket's io_context. The socket and on_frame must outlive the coroutine (the
// caller co_awaits it).
#pragma once

#include <asio.hpp>
#include <asio/experimental/as_tuple.hpp>
#include <span>
#include <vector>

#include "common/status.h"
#include "relay/clip_codec.h"

namespace vsc::relay {

enum class ReadEnd { kClosed, kMalformed, kStopped };

struct ReadResult {
  ReadEnd end = ReadEnd::kClosed;
  asio::error_code ec;           // kClosed: why the read failed
  Status status = Status::Ok();  // kMalformed: what the decoder refused
};

// on_frame by reference: GCC 12 destroys a temporary argument of a coroutine called in a
// co_await expression twice (a captured shared_ptr is released early: heap corruption seen
// under `vsc bench ring`), so callers name theirs.
template <typename OnFrame>
asio::awaitable<ReadResult> ReadFrames(asio::ip::tcp::socket& socket, OnFrame& on_frame) {
  FrameDecoder decoder;
  std::vector<uint8_t> buf(64 * 1024);
  ReadResult result;
  for (;;) {
    auto [ec, n] = co_await socket.async_read_some(
        asio::buffer(buf), asio::experimental::as_tuple(asio::use_awaitable));
    if (ec) {
      result.ec = ec;
      co_return result;
    }
    decoder.Feed(std::span<const uint8_t>(buf.data(), n));
    for (;;) {
      auto next = decoder.Next();
      if (!next.ok()) {
        result.end = ReadEnd::kMalformed;
        result.status = next.status();
        co_return result;
      }
      if (!next->has_value()) break;
      if (!on_frame(std::move(**next))) {
        result.end = ReadEnd::kStopped;
        co_return result;
      }
    }
  }
}

}  // namespace vsc::relay
