// Fuzzes the ring route-table decoder (docs/protocol.md "Ring route table"). Beyond not
// crashing, checks what the decoder promises: whatever it accepts re-encodes to exactly the
// input bytes, and feeding the same bytes in pieces gives the same answer as feeding them whole.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <vector>

#include "ring/table_codec.h"

using namespace vsc::ring;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::span<const uint8_t> in(data, size);
  auto whole = DecodeTable(in);
  if (whole.ok() && EncodeTable(*whole) != std::vector<uint8_t>(in.begin(), in.end())) {
    std::abort();
  }

  // The same bytes in pieces of 1 to 16 bytes, the sizes taken from the input itself.
  TableDecoder pieces;
  size_t off = 0;
  bool failed = false;
  while (off < size && !pieces.done()) {
    const size_t n = std::min<size_t>(1 + data[off] % 16, size - off);
    auto used = pieces.Feed(in.subspan(off, n));
    if (!used.ok()) {
      // The same refusal as the one-shot decoder, word for word.
      if (whole.ok() || used.status().message() != whole.status().message()) std::abort();
      failed = true;
      break;
    }
    off += *used;
  }
  if (failed) return 0;
  const bool complete = pieces.done() && off == size;
  if (complete != whole.ok()) std::abort();
  if (complete && !(pieces.TakeRing() == *whole)) std::abort();
  return 0;
}
