// Fuzzes the clip relay's frame decoder (docs/protocol.md "Clip relay"). Beyond not crashing,
// checks what the decoder promises: every frame it returns re-encodes to exactly the bytes it
// came from, feeding the input in pieces gives the same frames and the same final error as
// feeding it whole, and a peer frame that is opened with the wrong nonce never verifies.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <vector>

#include "relay/clip_codec.h"
#include "relay/peer_auth.h"

using namespace vsc::relay;

namespace {

struct Outcome {
  std::vector<Frame> frames;
  std::string error;
  size_t consumed = 0;  // bytes of the returned frames
};

Outcome Decode(std::span<const uint8_t> in, size_t piece_seed) {
  FrameDecoder d(4096);
  Outcome out;
  size_t off = 0;
  while (off < in.size() && out.error.empty()) {
    const size_t n = piece_seed == 0 ? in.size() - off
                                     : std::min<size_t>(1 + in[off] % piece_seed, in.size() - off);
    d.Feed(in.subspan(off, n));
    off += n;
    for (;;) {
      auto next = d.Next();
      if (!next.ok()) {
        out.error = next.status().message();
        break;
      }
      if (!next->has_value()) break;
      out.consumed += EncodeFrame(**next).size();
      out.frames.push_back(std::move(**next));
    }
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::span<const uint8_t> in(data, size);
  const Outcome whole = Decode(in, 0);
  std::vector<uint8_t> again;
  for (const Frame& f : whole.frames) AppendFrame(again, f);
  if (!std::equal(again.begin(), again.end(), in.begin(), in.begin() + again.size())) {
    std::abort();
  }
  const Outcome pieces = Decode(in, 16);
  if (pieces.frames != whole.frames || pieces.error != whole.error) std::abort();

  // Authentication: a frame sealed under one nonce never opens under another.
  if (!whole.frames.empty()) {
    static const auto key = vsc::proto::ClusterKey::FromHex(std::string(64, 'a')).value();
    vsc::proto::Nonce a{}, b{};
    b[0] = 1;
    PeerSealer sealer(key, a);
    PeerOpener wrong(key, b);
    PeerOpener right(key, a);
    Frame f = whole.frames.front();
    sealer.Seal(f);
    Frame g = f;
    if (wrong.Open(f).ok()) std::abort();
    if (!right.Open(g).ok() || !(g == whole.frames.front())) std::abort();
  }
  return 0;
}
