// Fuzzes ParseSnapshotHead (src/realserver/snapshot.h): the status line and headers a peer sends
// before a snapshot's database file, which decide how many bytes the fetcher reads and which
// replica state it expects. Whatever parses must be a 200 answer whose digest is the
// X-Vsc-Digest header read as hex; a refusal is DataLoss, or Unauthenticated for a 401.
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "realserver/snapshot.h"
#include "replication/digest.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  auto head = vsc::realserver::ParseSnapshotHead(in);
  if (!head.ok()) {
    const vsc::Code code = head.status().code();
    if (code != vsc::Code::kDataLoss && code != vsc::Code::kUnauthenticated) std::abort();
    if (head.status().message().empty()) std::abort();
    return 0;
  }
  if (head->status != 200) std::abort();
  std::string lower = head->digest_hex;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (vsc::replication::DigestHex(head->state.digest) != lower) std::abort();
  return 0;
}
