#include "store/statement.h"

#include <sqlite3.h>

#include <string>
#include <utility>

#include "store/sqlite_error.h"

namespace vsc::store {

Statement::Statement(Statement&& other) noexcept : stmt_(std::exchange(other.stmt_, nullptr)) {}

Statement& Statement::operator=(Statement&& other) noexcept {
  if (this != &other) {
    sqlite3_finalize(stmt_);
    stmt_ = std::exchange(other.stmt_, nullptr);
  }
  return *this;
}

Statement::~Statement() { sqlite3_finalize(stmt_); }

Status Statement::BindError(int rc, int idx) const {
  return SqliteStatus(rc, sqlite3_db_handle(stmt_), "bind parameter " + std::to_string(idx) + " of",
                      Sql());
}

Status Statement::BindInt64(int idx, int64_t value) {
  int rc = sqlite3_bind_int64(stmt_, idx, value);
  return rc == SQLITE_OK ? Status::Ok() : BindError(rc, idx);
}

Status Statement::Bind(int idx, double value) {
  int rc = sqlite3_bind_double(stmt_, idx, value);
  return rc == SQLITE_OK ? Status::Ok() : BindError(rc, idx);
}

Status Statement::Bind(int idx, std::string_view text) {
  int rc = sqlite3_bind_text64(stmt_, idx, text.data(), text.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
  return rc == SQLITE_OK ? Status::Ok() : BindError(rc, idx);
}

Status Statement::Bind(int idx, std::span<const uint8_t> blob) {
  // A zero-length blob from an empty span has a null data pointer, which SQLite would bind as
  // NULL; bind an explicit empty blob so the column type stays BLOB.
  int rc = blob.empty()
               ? sqlite3_bind_zeroblob(stmt_, idx, 0)
               : sqlite3_bind_blob64(stmt_, idx, blob.data(), blob.size(), SQLITE_TRANSIENT);
  return rc == SQLITE_OK ? Status::Ok() : BindError(rc, idx);
}

Status Statement::Bind(int idx, std::nullptr_t) {
  int rc = sqlite3_bind_null(stmt_, idx);
  return rc == SQLITE_OK ? Status::Ok() : BindError(rc, idx);
}

int Statement::BindParameterCount() const { return sqlite3_bind_parameter_count(stmt_); }

Result<bool> Statement::Step() {
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return SqliteStatus(rc, sqlite3_db_handle(stmt_), "step", Sql());
}

Status Statement::Run() {
  for (;;) {
    Result<bool> row = Step();
    if (!row.ok()) {
      Reset();
      return row.status();
    }
    if (!*row) break;
  }
  Reset();
  return Status::Ok();
}

void Statement::Reset() {
  // sqlite3_reset repeats the error of the last Step, which Step has already reported.
  sqlite3_reset(stmt_);
}

void Statement::ClearBindings() { sqlite3_clear_bindings(stmt_); }

int Statement::ColumnCount() const { return sqlite3_column_count(stmt_); }

std::string_view Statement::ColumnName(int col) const {
  const char* name = sqlite3_column_name(stmt_, col);
  return name != nullptr ? std::string_view(name) : std::string_view();
}

ValueType Statement::ColumnType(int col) const {
  switch (sqlite3_column_type(stmt_, col)) {
    case SQLITE_INTEGER:
      return ValueType::kInteger;
    case SQLITE_FLOAT:
      return ValueType::kFloat;
    case SQLITE_TEXT:
      return ValueType::kText;
    case SQLITE_BLOB:
      return ValueType::kBlob;
    default:
      return ValueType::kNull;
  }
}

int64_t Statement::ColumnInt64(int col) const { return sqlite3_column_int64(stmt_, col); }

double Statement::ColumnDouble(int col) const { return sqlite3_column_double(stmt_, col); }

std::string_view Statement::ColumnText(int col) const {
  // Text first, then bytes: sqlite3_column_bytes after sqlite3_column_text gives the length of
  // the UTF-8 form just produced.
  const unsigned char* p = sqlite3_column_text(stmt_, col);
  if (p == nullptr) return {};
  return {reinterpret_cast<const char*>(p), static_cast<size_t>(sqlite3_column_bytes(stmt_, col))};
}

std::span<const uint8_t> Statement::ColumnBlob(int col) const {
  const void* p = sqlite3_column_blob(stmt_, col);
  if (p == nullptr) return {};
  return {static_cast<const uint8_t*>(p), static_cast<size_t>(sqlite3_column_bytes(stmt_, col))};
}

bool Statement::readonly() const { return sqlite3_stmt_readonly(stmt_) != 0; }

std::string_view Statement::Sql() const {
  const char* sql = stmt_ != nullptr ? sqlite3_sql(stmt_) : nullptr;
  return sql != nullptr ? std::string_view(sql) : std::string_view();
}

std::string Statement::ExpandedSql() const {
  char* s = sqlite3_expanded_sql(stmt_);
  if (s == nullptr) return std::string(Sql());
  std::string out(s);
  sqlite3_free(s);
  return out;
}

}  // namespace vsc::store
