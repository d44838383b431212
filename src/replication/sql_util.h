// Small SQL helpers shared by the mirror, the executor and the log: binding a replicated Value to
// a raw sqlite3_stmt, reading a column back as a Value, and looking at the first keyword of a
// statement. Internal to vsc_replication.
#pragma once

#include <string>
#include <string_view>

#include "replication/entry.h"

struct sqlite3_stmt;

namespace vsc::replication {

// sqlite3_bind_* for `value` at 1-based `idx`; returns the SQLite result code.
int BindValue(sqlite3_stmt* stmt, int idx, const Value& value);
// Column `col` of the current row, with its storage class.
Value ColumnValue(sqlite3_stmt* stmt, int col);
// The first keyword, upper-cased, after whitespace and comments ("" when there is none).
std::string FirstKeyword(std::string_view sql);
// True when only whitespace, ';' and comments remain.
bool IsBlankSql(std::string_view sql);

}  // namespace vsc::replication
