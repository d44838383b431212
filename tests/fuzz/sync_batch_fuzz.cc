// Fuzzes the state sync decoder (director/sync_codec.h): the SyncBatch a director opens from a
// peer's envelope. Beyond not crashing, checks what the decoder promises: every record is
// either decoded or counted as malformed, and a decoded record packs and decodes to itself
// (nothing it accepts is lost or changed on the way to the next peer).
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "director/sync_codec.h"

using namespace vsc::director;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  vsc::proto::SyncBatch batch;
  if (!batch.ParseFromArray(data, static_cast<int>(size))) return 0;
  const UnpackedSync u = UnpackSync(batch);
  if (u.records.size() + u.malformed != static_cast<size_t>(batch.records_size())) std::abort();
  std::vector<SyncRecord> again;
  for (const vsc::proto::Message& m : PackSync(u.records)) {
    if (m.sync_batch().ByteSizeLong() > kMaxSyncBatchBytes) std::abort();
    const UnpackedSync v = UnpackSync(m.sync_batch());
    if (v.malformed != 0) std::abort();
    again.insert(again.end(), v.records.begin(), v.records.end());
  }
  if (again != u.records) std::abort();
  return 0;
}
