// StreamEntry: a sequenced entry as the director streams it to its replicas (DESIGN §7). The
// entry's proto::LogEntry encoding is made once, when it is sequenced or read back from the log,
// and shared by every replica stream: a Replicate message is then built by copying those bytes
// (EncodeReplicate), not by converting the entry into a fresh protobuf once per replica. The
// bytes are the ones protobuf itself serializes, so the real server's decoder sees no change.
// Pure; immutable once made (shared between streams by pointer).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "replication/entry.h"

namespace vsc::director {

struct StreamEntry {
  replication::Entry entry;
  uint64_t payload_bytes = 0;  // replication::PayloadBytes(entry), for windows and batch limits
  std::string wire;            // the serialized proto::LogEntry
};
using StreamEntryPtr = std::shared_ptr<const StreamEntry>;

StreamEntryPtr MakeStreamEntry(replication::Entry entry);

// Replaces `out` with the serialized proto::Message whose body is the Replicate
// {entries (in this order), head_seq, epoch}: byte for byte what proto::Message serializes for
// that message, made from each entry's cached encoding. `out` keeps its capacity (reuse it).
void EncodeReplicate(std::span<const StreamEntryPtr> entries, uint64_t head_seq, uint64_t epoch,
                     std::string& out);

}  // namespace vsc::director
