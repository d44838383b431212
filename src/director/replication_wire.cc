#include "director/replication_wire.h"

namespace vsc::director {

using replication::Entry;
using replication::Statement;
using replication::Value;

Value FromProto(const proto::SqlValue& v) {
  switch (v.value_case()) {
    case proto::SqlValue::kInteger: return Value::Int(v.integer());
    case proto::SqlValue::kReal: return Value::Real(v.real());
    case proto::SqlValue::kText: return Value::Text(v.text());
    case proto::SqlValue::kBlob: return Value::Blob(v.blob());
    case proto::SqlValue::kNull:
    case proto::SqlValue::VALUE_NOT_SET: break;
  }
  return Value::Null();
}

void ToProto(const Value& v, proto::SqlValue* out) {
  switch (v.kind) {
    case Value::Kind::kNull: out->set_null(true); break;
    case Value::Kind::kInt: out->set_integer(v.i); break;
    case Value::Kind::kReal: out->set_real(v.r); break;
    case Value::Kind::kText: out->set_text(v.bytes); break;
    case Value::Kind::kBlob: out->set_blob(v.bytes); break;
  }
}

Statement FromProto(const proto::SqlStatement& s) {
  Statement st;
  st.sql = s.sql();
  st.params.reserve(s.params_size());
  for (const auto& p : s.params()) st.params.push_back(FromProto(p));
  return st;
}

void ToProto(const Statement& s, proto::SqlStatement* out) {
  out->set_sql(s.sql);
  for (const Value& v : s.params) ToProto(v, out->add_params());
}

void ToProto(const Entry& e, proto::LogEntry* out) {
  out->set_epoch(e.epoch);
  out->set_seq(e.seq);
  out->set_ts_micros(e.ts_micros);
  out->set_kind(static_cast<uint32_t>(e.kind));
  for (const Statement& s : e.statements) ToProto(s, out->add_statements());
  out->set_idempotency_key(e.idempotency_key);
  out->set_idempotency_window(e.idempotency_window);
}

Entry FromProto(const proto::LogEntry& e) {
  Entry out;
  out.epoch = e.epoch();
  out.seq = e.seq();
  out.ts_micros = e.ts_micros();
  out.kind = e.kind() == 1 ? Entry::Kind::kChecksum : Entry::Kind::kWrite;
  for (const auto& s : e.statements()) out.statements.push_back(FromProto(s));
  out.idempotency_key = e.idempotency_key();
  out.idempotency_window = e.idempotency_window();
  return out;
}

replication::EntryResult FromProto(const proto::EntryOutcome& o) {
  replication::EntryResult r;
  r.seq = o.seq();
  r.code = o.code();
  r.rows_changed = o.rows_changed();
  r.error = o.error();
  r.checksum = o.checksum();
  for (const proto::StatementOutcome& so : o.statements()) {
    r.statements.push_back({so.rows_affected(), so.last_insert_id()});
  }
  r.failed_statement = o.failed_statement();
  r.duplicate_of = o.duplicate_of();
  return r;
}

void AddStatementOutcomes(const replication::EntryResult& r, proto::WriteResponse& out) {
  for (const replication::StatementResult& st : r.statements) {
    proto::StatementOutcome* so = out.add_statements();
    so->set_rows_affected(st.rows_affected);
    so->set_last_insert_id(st.last_insert_id);
  }
  out.set_failed_statement(r.failed_statement);
}

}  // namespace vsc::director
