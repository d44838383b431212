#include "replication/idempotency_table.h"

#include <sqlite3.h>

#include "replication/entry_codec.h"
#include "replication/idempotency.h"
#include "store/sqlite_error.h"

namespace vsc::replication {
namespace {

constexpr const char* kCreate =
    "CREATE TABLE IF NOT EXISTS _vsc_idempotency(key TEXT PRIMARY KEY, seq INTEGER NOT NULL, "
    "code INTEGER NOT NULL, rows_changed INTEGER NOT NULL, error TEXT NOT NULL, "
    "failed_statement INTEGER NOT NULL, statements BLOB NOT NULL) WITHOUT ROWID;"
    "CREATE INDEX IF NOT EXISTS _vsc_idempotency_seq ON _vsc_idempotency(seq);";

// Per statement: rows_affected, last_insert_id (i64 each, big-endian), after a u32 count.
std::string EncodeResults(const std::vector<StatementResult>& results) {
  std::string out;
  PutU32(out, static_cast<uint32_t>(results.size()));
  for (const StatementResult& r : results) {
    PutI64(out, r.rows_affected);
    PutI64(out, r.last_insert_id);
  }
  return out;
}

uint64_t GetU64(const unsigned char* p, size_t n) {
  uint64_t v = 0;
  for (size_t i = 0; i < n; ++i) v = (v << 8) | p[i];
  return v;
}

Result<std::vector<StatementResult>> DecodeResults(const unsigned char* p, size_t n) {
  if (n < 4) return DataLoss("idempotency table: statement outcomes truncated");
  const uint64_t count = GetU64(p, 4);
  if (n != 4 + count * 16) return DataLoss("idempotency table: statement outcomes damaged");
  std::vector<StatementResult> out(count);
  for (uint64_t i = 0; i < count; ++i) {
    out[i].rows_affected = static_cast<int64_t>(GetU64(p + 4 + 16 * i, 8));
    out[i].last_insert_id = static_cast<int64_t>(GetU64(p + 12 + 16 * i, 8));
  }
  return out;
}

}  // namespace

Result<std::unique_ptr<IdempotencyTable>> IdempotencyTable::Open(sqlite3* db, std::string path) {
  std::unique_ptr<IdempotencyTable> t(new IdempotencyTable(db, std::move(path)));
  if (int rc = sqlite3_exec(db, kCreate, nullptr, nullptr, nullptr); rc != SQLITE_OK) {
    return t->Error(rc, "create the idempotency table");
  }
  return t;
}

IdempotencyTable::~IdempotencyTable() {
  for (sqlite3_stmt* st : {prune_, find_, record_}) sqlite3_finalize(st);
}

Status IdempotencyTable::Error(int rc, const char* what) const {
  return store::SqliteStatus(rc, db_, std::string("replica ") + what, path_);
}

int IdempotencyTable::Prepared(sqlite3_stmt*& slot, const char* sql) {
  if (slot != nullptr) return SQLITE_OK;
  return sqlite3_prepare_v3(db_, sql, -1, SQLITE_PREPARE_PERSISTENT, &slot, nullptr);
}

Status IdempotencyTable::Prune(uint64_t seq, uint64_t window) {
  const uint64_t oldest = OldestRemembered(seq, window);
  if (oldest == 0) return Status::Ok();
  int rc = Prepared(prune_, "DELETE FROM _vsc_idempotency WHERE seq < ?1");
  if (rc == SQLITE_OK) {
    sqlite3_bind_int64(prune_, 1, static_cast<int64_t>(oldest));
    rc = sqlite3_step(prune_);
    sqlite3_reset(prune_);
    if (rc == SQLITE_DONE) return Status::Ok();
  }
  return Error(rc, "prune the idempotency table");
}

Result<std::optional<EntryResult>> IdempotencyTable::Find(const std::string& key) {
  int rc = Prepared(find_,
                    "SELECT seq, code, rows_changed, error, failed_statement, statements "
                    "FROM _vsc_idempotency WHERE key = ?1");
  if (rc != SQLITE_OK) return Error(rc, "read the idempotency table");
  sqlite3_bind_text(find_, 1, key.data(), static_cast<int>(key.size()), SQLITE_STATIC);
  rc = sqlite3_step(find_);
  std::optional<EntryResult> out;
  Status bad = Status::Ok();
  if (rc == SQLITE_ROW) {
    EntryResult r;
    r.duplicate_of = static_cast<uint64_t>(sqlite3_column_int64(find_, 0));
    r.code = sqlite3_column_int(find_, 1);
    r.rows_changed = sqlite3_column_int64(find_, 2);
    const auto* text = sqlite3_column_text(find_, 3);
    r.error = text ? reinterpret_cast<const char*>(text) : "";
    r.failed_statement = static_cast<uint32_t>(sqlite3_column_int64(find_, 4));
    auto results = DecodeResults(static_cast<const unsigned char*>(sqlite3_column_blob(find_, 5)),
                                 static_cast<size_t>(sqlite3_column_bytes(find_, 5)));
    if (results.ok()) {
      r.statements = std::move(results).value();
      out = std::move(r);
    } else {
      bad = results.status();
    }
    rc = SQLITE_DONE;
  }
  sqlite3_reset(find_);
  sqlite3_clear_bindings(find_);
  if (!bad.ok()) return bad;
  if (rc != SQLITE_DONE) return Error(rc, "read the idempotency table");
  return out;
}

Status IdempotencyTable::Record(const std::string& key, const EntryResult& result) {
  int rc = Prepared(record_,
                    "INSERT OR REPLACE INTO _vsc_idempotency(key, seq, code, rows_changed, error, "
                    "failed_statement, statements) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7)");
  if (rc != SQLITE_OK) return Error(rc, "record an idempotency key");
  const std::string results = EncodeResults(result.statements);
  sqlite3_bind_text(record_, 1, key.data(), static_cast<int>(key.size()), SQLITE_STATIC);
  sqlite3_bind_int64(record_, 2, static_cast<int64_t>(result.seq));
  sqlite3_bind_int(record_, 3, result.code);
  sqlite3_bind_int64(record_, 4, result.rows_changed);
  sqlite3_bind_text(record_, 5, result.error.data(), static_cast<int>(result.error.size()),
                    SQLITE_STATIC);
  sqlite3_bind_int64(record_, 6, result.failed_statement);
  sqlite3_bind_blob(record_, 7, results.data(), static_cast<int>(results.size()), SQLITE_STATIC);
  rc = sqlite3_step(record_);
  sqlite3_reset(record_);
  sqlite3_clear_bindings(record_);
  if (rc == SQLITE_DONE) return Status::Ok();
  return Error(rc, "record an idempotency key");
}

}  // namespace vsc::replication
