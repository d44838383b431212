#include "realserver/replication_wire.h"

namespace vsc::realserver {

replication::Value ValueFromProto(const proto::SqlValue& v) {
  switch (v.value_case()) {
    case proto::SqlValue::kInteger:
      return replication::Value::Int(v.integer());
    case proto::SqlValue::kReal:
      return replication::Value::Real(v.real());
    case proto::SqlValue::kText:
      return replication::Value::Text(v.text());
    case proto::SqlValue::kBlob:
      return replication::Value::Blob(v.blob());
    case proto::SqlValue::kNull:
    case proto::SqlValue::VALUE_NOT_SET:
      break;
  }
  return replication::Value::Null();
}

proto::SqlValue ValueToProto(const replication::Value& v) {
  proto::SqlValue out;
  switch (v.kind) {
    case replication::Value::Kind::kNull:
      out.set_null(true);
      break;
    case replication::Value::Kind::kInt:
      out.set_integer(v.i);
      break;
    case replication::Value::Kind::kReal:
      out.set_real(v.r);
      break;
    case replication::Value::Kind::kText:
      out.set_text(v.bytes);
      break;
    case replication::Value::Kind::kBlob:
      out.set_blob(v.bytes);
      break;
  }
  return out;
}

Result<replication::Entry> EntryFromProto(const proto::LogEntry& e) {
  replication::Entry out;
  out.epoch = e.epoch();
  out.seq = e.seq();
  out.ts_micros = e.ts_micros();
  switch (e.kind()) {
    case 0:
      out.kind = replication::Entry::Kind::kWrite;
      break;
    case 1:
      out.kind = replication::Entry::Kind::kChecksum;
      break;
    default:
      return InvalidArgument("entry " + std::to_string(e.seq()) + " has unknown kind " +
                             std::to_string(e.kind()) +
                             "; upgrade this real server to the director's version");
  }
  out.statements.reserve(e.statements_size());
  for (const auto& s : e.statements()) {
    replication::Statement st;
    st.sql = s.sql();
    st.params.reserve(s.params_size());
    for (const auto& p : s.params()) st.params.push_back(ValueFromProto(p));
    out.statements.push_back(std::move(st));
  }
  out.idempotency_key = e.idempotency_key();
  out.idempotency_window = e.idempotency_window();
  return out;
}

proto::EntryOutcome OutcomeToProto(const replication::EntryResult& r) {
  proto::EntryOutcome o;
  o.set_seq(r.seq);
  o.set_code(r.code);
  o.set_rows_changed(r.rows_changed);
  o.set_error(r.error);
  o.set_checksum(r.checksum);
  for (const replication::StatementResult& st : r.statements) {
    proto::StatementOutcome* so = o.add_statements();
    so->set_rows_affected(st.rows_affected);
    so->set_last_insert_id(st.last_insert_id);
  }
  o.set_failed_statement(r.failed_statement);
  o.set_duplicate_of(r.duplicate_of);
  return o;
}

std::string DigestBytes(const replication::Digest& d) {
  return std::string(reinterpret_cast<const char*>(d.data()), d.size());
}

proto::ReplicaAck MakeAck(const replication::ReplicaState& state,
                          std::span<const replication::EntryResult> results,
                          const std::string& error) {
  proto::ReplicaAck ack;
  ack.set_applied_seq(state.applied_seq);
  ack.set_digest(DigestBytes(state.digest));
  for (const auto& r : results) *ack.add_outcomes() = OutcomeToProto(r);
  ack.set_error(error);
  return ack;
}

}  // namespace vsc::realserver
