// Fuzzes the data-path lookup decoders (request, response, forward header). Beyond not crashing,
// checks the canonical property the decoders promise: whatever they accept re-encodes to exactly
// the input bytes.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <span>
#include <vector>

#include "proto/lookup_codec.h"

using namespace vsc::proto;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::span<const uint8_t> in(data, size);

  if (auto req = DecodeRequest(in); req.ok()) {
    uint8_t out[kMaxRequestSize];
    const size_t n = EncodeRequest(req->ToRequest(), out);
    if (n != size || std::memcmp(out, data, size) != 0) std::abort();
  }

  if (auto resp = DecodeResponse(in); resp.ok()) {
    std::vector<uint8_t> out(kMaxResponseSize);
    const size_t n = EncodeResponse(*resp, out);
    if (n != size || std::memcmp(out.data(), data, size) != 0) std::abort();
  }

  if (auto fwd = DecodeForwardHeader(in); fwd.ok()) {
    if (!HasForwardHeader(in)) std::abort();
    uint8_t out[kForwardHeaderSize];
    EncodeForwardHeader(*fwd, out);
    if (std::memcmp(out, data, kForwardHeaderSize) != 0) std::abort();
    // What a real server does next: decode the client's request behind the header.
    (void)DecodeRequest(in.subspan(kForwardHeaderSize));
  }
  return 0;
}
