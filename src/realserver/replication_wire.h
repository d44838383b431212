// Conversions between the replication wire messages (replication.proto) and the replication
// core's plain values (replication/entry.h), as the real server needs them: LogEntry -> Entry
// for the applier, EntryResult -> EntryOutcome and the replica state -> ReplicaAck for the
// director. Pure; no I/O.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "common/status.h"
#include "proto/replication.pb.h"
#include "replication/entry.h"
#include "replication/executor.h"

namespace vsc::realserver {

replication::Value ValueFromProto(const proto::SqlValue& v);
proto::SqlValue ValueToProto(const replication::Value& v);

// InvalidArgument for an entry kind this build does not know (the director is newer): applying
// it blindly could diverge silently.
Result<replication::Entry> EntryFromProto(const proto::LogEntry& e);

proto::EntryOutcome OutcomeToProto(const replication::EntryResult& r);

// The 32 digest bytes as the wire carries them.
std::string DigestBytes(const replication::Digest& d);

// An ack for the state after a batch: applied_seq, digest, the outcomes of the entries newly
// applied, and `error` when the batch could not be applied.
proto::ReplicaAck MakeAck(const replication::ReplicaState& state,
                          std::span<const replication::EntryResult> results,
                          const std::string& error);

}  // namespace vsc::realserver
