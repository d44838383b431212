// Conversions between the replication wire messages (replication.proto) and the replication
// library's values (replication/entry.h), as the director uses them. Pure. The mapping is
// one to one (SqlValue's oneof <-> Value::Kind; an unset SqlValue is NULL), so an entry that
// crosses the wire and back is equal to itself and digests computed on both sides agree.
#pragma once

#include <vector>

#include "proto/control.pb.h"
#include "replication/entry.h"

namespace vsc::director {

replication::Value FromProto(const proto::SqlValue& v);
void ToProto(const replication::Value& v, proto::SqlValue* out);
replication::Statement FromProto(const proto::SqlStatement& s);
void ToProto(const replication::Statement& s, proto::SqlStatement* out);
void ToProto(const replication::Entry& e, proto::LogEntry* out);
replication::Entry FromProto(const proto::LogEntry& e);
replication::EntryResult FromProto(const proto::EntryOutcome& o);
// The per-statement outcomes of a decided write, for its writer.
void AddStatementOutcomes(const replication::EntryResult& r, proto::WriteResponse& out);

}  // namespace vsc::director
