// Fuzzes the parsers of etcd's v3 JSON gateway answers (src/director/etcd_codec.h): one watch
// stream message, and the grant, keepalive, revoke, range and txn answers, under the HTTP status
// the first byte picks; and the in-sync record, a value read from etcd (in_sync_record.h). None
// may crash; a parsed watch message must be self-consistent, a parsed record encodes back to a
// value that parses to itself.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "director/etcd_codec.h"
#include "director/in_sync_record.h"

using namespace vsc::director::etcd;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  static constexpr int kStatuses[] = {200, 400, 404, 500, 503};
  const int status = kStatuses[data[0] % 5];
  std::string_view in(reinterpret_cast<const char*>(data + 1), size - 1);
  if (auto m = ParseWatchMessage(in); m.ok()) {
    for (const WatchEvent& e : m->events) {
      if (e.kv.key.size() > in.size()) std::abort();  // decoded base64 is shorter
    }
  }
  (void)ParseGrant(status, in);
  (void)ParseKeepAlive(status, in);
  (void)ParseRevoke(status, in);
  (void)ParseRange(status, in);
  (void)ParseTxn(status, in);
  if (auto r = vsc::director::ParseInSyncRecord(in); r.ok()) {
    auto back = vsc::director::ParseInSyncRecord(vsc::director::EncodeInSyncRecord(*r));
    if (!back.ok() || !(*back == *r)) std::abort();
  }
  return 0;
}
