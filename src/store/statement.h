// Statement: one prepared SQLite statement (sqlite3_stmt), move-only, finalized on destruction.
//
// Made by Database::Prepare. Owned and used by the thread that owns its Database (connections
// are opened without SQLite's connection mutex). A Statement may outlive its Database: the
// connection is closed with sqlite3_close_v2 and stays alive until the last statement is
// finalized.
//
// Parameter indexes are 1-based and column indexes 0-based, as in SQLite. Text and blob
// arguments are copied at Bind time, so the caller's buffer may go away right after. Column
// accessors return views that stay valid until the next Step, Reset or destruction.
//
// Failures return a Status whose message has SQLite's text and the statement:
// "step 'INSERT INTO t VALUES(?)': UNIQUE constraint failed: t.id".
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "common/status.h"

struct sqlite3_stmt;

namespace vsc::store {

enum class ValueType { kInteger, kFloat, kText, kBlob, kNull };

class Statement {
 public:
  // An empty statement (what a moved-from Statement becomes); only destruction and assignment
  // are valid on it.
  Statement() = default;
  explicit Statement(sqlite3_stmt* stmt) : stmt_(stmt) {}
  Statement(Statement&& other) noexcept;
  Statement& operator=(Statement&& other) noexcept;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  ~Statement();

  // Integers of any width bind as SQLite INTEGER (int64); an unsigned value above INT64_MAX
  // wraps to its two's-complement int64, so store such values as blobs or text instead.
  template <std::integral T>
  Status Bind(int idx, T value) {
    return BindInt64(idx, static_cast<int64_t>(value));
  }
  Status Bind(int idx, double value);
  Status Bind(int idx, std::string_view text);
  Status Bind(int idx, const char* text) { return Bind(idx, std::string_view(text)); }
  Status Bind(int idx, std::span<const uint8_t> blob);
  Status Bind(int idx, std::nullptr_t);
  Status BindInt64(int idx, int64_t value);
  int BindParameterCount() const;

  // Runs one step. true: a row is available through the Column accessors; false: done.
  Result<bool> Step();
  // Steps until done, ignoring rows, then resets: for statements run for their effect.
  Status Run();
  // Makes the statement ready to run again; bindings are kept.
  void Reset();
  // Sets every parameter back to NULL.
  void ClearBindings();

  int ColumnCount() const;
  std::string_view ColumnName(int col) const;
  ValueType ColumnType(int col) const;
  int64_t ColumnInt64(int col) const;
  double ColumnDouble(int col) const;
  // Empty for NULL.
  std::string_view ColumnText(int col) const;
  std::span<const uint8_t> ColumnBlob(int col) const;

  // True when the statement cannot change the database (sqlite3_stmt_readonly): SELECT and
  // read-only pragmas; false for INSERT/UPDATE/DELETE/DDL. BEGIN and COMMIT count as read-only.
  bool readonly() const;
  // The SQL text the statement was prepared from.
  std::string_view Sql() const;
  // The SQL with the current bindings substituted (for logs and replication digests).
  std::string ExpandedSql() const;

  sqlite3_stmt* handle() { return stmt_; }
  explicit operator bool() const { return stmt_ != nullptr; }

 private:
  Status BindError(int rc, int idx) const;

  sqlite3_stmt* stmt_ = nullptr;
};

}  // namespace vsc::store
