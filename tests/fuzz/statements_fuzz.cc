// Fuzzes DecodeStatements, the decoder of log payloads read back from the director's log file
// (src/replication/entry_codec.h). The encoding is canonical: whatever decodes must encode to
// exactly the input bytes, and a decoded payload must decode again to the same statements.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "replication/entry_codec.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  auto decoded = vsc::replication::DecodeStatements(in);
  if (!decoded.ok()) {
    if (decoded.status().code() != vsc::Code::kDataLoss) std::abort();
    return 0;
  }
  const std::string encoded = vsc::replication::EncodeStatements(*decoded);
  if (encoded != in) std::abort();
  return 0;
}
