#include "replication/sql_util.h"

#include <sqlite3.h>

#include <cctype>

namespace vsc::replication {
namespace {

// Skips whitespace, ';' and comments from `i`; returns the new position.
size_t SkipBlank(std::string_view s, size_t i) {
  while (i < s.size()) {
    const char c = s[i];
    if (std::isspace(static_cast<unsigned char>(c)) || c == ';') {
      ++i;
    } else if (s.substr(i, 2) == "--") {
      const size_t nl = s.find('\n', i);
      i = nl == std::string_view::npos ? s.size() : nl + 1;
    } else if (s.substr(i, 2) == "/*") {
      const size_t end = s.find("*/", i + 2);
      i = end == std::string_view::npos ? s.size() : end + 2;
    } else {
      break;
    }
  }
  return i;
}

}  // namespace

int BindValue(sqlite3_stmt* stmt, int idx, const Value& value) {
  switch (value.kind) {
    case Value::Kind::kNull:
      return sqlite3_bind_null(stmt, idx);
    case Value::Kind::kInt:
      return sqlite3_bind_int64(stmt, idx, value.i);
    case Value::Kind::kReal:
      return sqlite3_bind_double(stmt, idx, value.r);
    case Value::Kind::kText:
      return sqlite3_bind_text64(stmt, idx, value.bytes.data(), value.bytes.size(),
                                 SQLITE_TRANSIENT, SQLITE_UTF8);
    case Value::Kind::kBlob:
      // An empty blob must stay a blob, not become NULL (a null data pointer binds NULL).
      return value.bytes.empty() ? sqlite3_bind_zeroblob(stmt, idx, 0)
                                 : sqlite3_bind_blob64(stmt, idx, value.bytes.data(),
                                                       value.bytes.size(), SQLITE_TRANSIENT);
  }
  return SQLITE_MISUSE;
}

Value ColumnValue(sqlite3_stmt* stmt, int col) {
  switch (sqlite3_column_type(stmt, col)) {
    case SQLITE_INTEGER:
      return Value::Int(sqlite3_column_int64(stmt, col));
    case SQLITE_FLOAT:
      return Value::Real(sqlite3_column_double(stmt, col));
    case SQLITE_TEXT: {
      const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(stmt, col));
      return Value::Text(std::string(p, static_cast<size_t>(sqlite3_column_bytes(stmt, col))));
    }
    case SQLITE_BLOB: {
      const auto* p = static_cast<const char*>(sqlite3_column_blob(stmt, col));
      const auto n = static_cast<size_t>(sqlite3_column_bytes(stmt, col));
      return Value::Blob(n == 0 ? std::string() : std::string(p, n));
    }
    default:
      return Value::Null();
  }
}

std::string FirstKeyword(std::string_view sql) {
  size_t i = SkipBlank(sql, 0);
  std::string word;
  while (i < sql.size() && (std::isalnum(static_cast<unsigned char>(sql[i])) || sql[i] == '_')) {
    word.push_back(static_cast<char>(std::toupper(static_cast<unsigned char>(sql[i]))));
    ++i;
  }
  return word;
}

bool IsBlankSql(std::string_view sql) { return SkipBlank(sql, 0) == sql.size(); }

}  // namespace vsc::replication
