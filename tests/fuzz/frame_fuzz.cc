// Fuzzes FrameDecoder: the input (after two control bytes) is fed whole and, separately, in
// chunks whose sizes the input chooses; both decodings must agree, every frame must respect the
// limit, the frames must re-encode to exactly the bytes consumed, and a failure must be final.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <vector>

#include "proto/frame.h"

namespace {

struct Decoded {
  std::vector<std::vector<uint8_t>> frames;
  bool failed = false;
};

Decoded Run(std::span<const uint8_t> stream, size_t max_frame, uint8_t chunk_seed, bool whole) {
  vsc::proto::FrameDecoder dec(max_frame);
  Decoded out;
  uint32_t lcg = chunk_seed;
  size_t off = 0;
  while (off < stream.size() && !out.failed) {
    lcg = lcg * 1103515245u + 12345u;
    size_t n = whole ? stream.size() : 1 + (lcg >> 16) % 23;
    if (n > stream.size() - off) n = stream.size() - off;
    dec.Feed(stream.subspan(off, n));
    off += n;
    for (;;) {
      auto next = dec.Next();
      if (!next.ok()) {
        out.failed = true;
        if (!dec.failed() || dec.Next().ok()) std::abort();  // failure must be final
        break;
      }
      if (!next->has_value()) break;
      const auto& f = **next;
      if (f.empty() || f.size() > max_frame) std::abort();
      out.frames.push_back(std::move(**next));
    }
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const size_t max_frame = 1 + size_t{data[0]} * 3;
  const uint8_t chunk_seed = data[1];
  const std::span<const uint8_t> stream(data + 2, size - 2);

  const Decoded whole = Run(stream, max_frame, chunk_seed, true);
  const Decoded split = Run(stream, max_frame, chunk_seed, false);
  if (whole.frames != split.frames || whole.failed != split.failed) std::abort();

  std::vector<uint8_t> reencoded;
  for (const auto& f : whole.frames) vsc::proto::AppendFrame(reencoded, f);
  if (reencoded.size() > stream.size() ||
      !std::equal(reencoded.begin(), reencoded.end(), stream.begin())) {
    std::abort();
  }
  return 0;
}
