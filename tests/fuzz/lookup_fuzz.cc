// Fuzzes the data-path lookup decoders (request, response, forward header in both forms). Beyond
// not crashing, checks the canonical property the decoders promise: whatever they accept re-encodes
// to exactly the input bytes.
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

  // Both forms of the forward header (IPv4, version 1; IPv6, version 2): the allocation-free
  // check and the decoder agree, and an accepted header re-encodes to the input's bytes.
  const ForwardCheck check = CheckForwardHeader(in);
  auto fwd = DecodeForwardHeader(in);
  if (fwd.ok() != (check.fault == ForwardFault::kNone)) std::abort();
  if (fwd.ok()) {
    if (!HasForwardHeader(in)) std::abort();
    if (fwd->size() > size || fwd->ipv6 != (data[2] == kForwardVersionV6)) std::abort();
    uint8_t out[kMaxForwardHeaderSize];
    if (WriteForwardHeader(*fwd, out) != fwd->size()) std::abort();
    if (std::memcmp(out, data, fwd->size()) != 0) std::abort();
    // What a real server does next: decode the client's request behind the header.
    (void)DecodeRequest(in.subspan(fwd->size()));
  }
  return 0;
}
