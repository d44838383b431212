// The wire form of SyncRecords (proto/sync.proto): packing them into SyncBatch messages that
// each fit one UDP datagram, and reading a batch back, record by record.
//
// Pure. A record that does not decode (unknown kind or protocol, an address of the wrong size,
// a port above 65535, no time left or more than kMaxSyncLife) is skipped and counted; the rest of
// the batch is used, since each record stands alone.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "director/sync_record.h"
#include "proto/control.pb.h"
#include "vservice/virtual_service_table.h"

namespace vsc::director {

// Room for the batch inside one datagram of a 1500-byte MTU path: 1500 - IPv6 and UDP headers
// - the envelope's fixed part and sender.
inline constexpr size_t kMaxSyncBatchBytes = 1300;

// Longest life a record may claim: ipvsadm's largest timeout (31 days; it fits the wire's u32 ms).
inline constexpr std::chrono::milliseconds kMaxSyncLife =
    std::chrono::seconds(vservice::kMaxPersistenceTimeout);

// Messages (Message.sync_batch) of at most kMaxSyncBatchBytes of batch each, records in order.
std::vector<proto::Message> PackSync(std::span<const SyncRecord> records);

struct UnpackedSync {
  std::vector<SyncRecord> records;
  size_t malformed = 0;  // records skipped
};
UnpackedSync UnpackSync(const proto::SyncBatch& batch);

}  // namespace vsc::director
