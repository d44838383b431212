#include "store/sqlite_error.h"

#include <sqlite3.h>

#include <string>

namespace vsc::store {

Code CodeForSqlite(int rc) {
  switch (rc) {
    case SQLITE_CONSTRAINT_UNIQUE:
    case SQLITE_CONSTRAINT_PRIMARYKEY:
    case SQLITE_CONSTRAINT_ROWID:
      return Code::kAlreadyExists;
    default:
      break;
  }
  switch (rc & 0xff) {
    case SQLITE_OK:
      return Code::kOk;
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return Code::kUnavailable;
    case SQLITE_CONSTRAINT:
    case SQLITE_READONLY:
    case SQLITE_ABORT:
      return Code::kFailedPrecondition;
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      return Code::kDataLoss;
    case SQLITE_FULL:
    case SQLITE_NOMEM:
      return Code::kResourceExhausted;
    case SQLITE_IOERR:
    case SQLITE_CANTOPEN:
    case SQLITE_PERM:
    case SQLITE_PROTOCOL:
      return Code::kIo;
    case SQLITE_MISUSE:
    case SQLITE_INTERNAL:
      return Code::kInternal;
    default:
      return Code::kInvalidArgument;
  }
}

Status SqliteStatus(int rc, sqlite3* db, std::string_view what, std::string_view sql) {
  constexpr size_t kMaxSql = 200;
  std::string m(what);
  m += " '";
  if (sql.size() > kMaxSql) {
    m.append(sql.substr(0, kMaxSql));
    m += "...";
  } else {
    m.append(sql);
  }
  m += "': ";
  // sqlite3_errmsg describes the most recent failure on the connection, which is this one:
  // callers build the Status right after the failing call, on the thread that owns `db`.
  m += db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  Code code = CodeForSqlite(rc);
  if (code == Code::kOk) code = Code::kInternal;
  return Status(code, std::move(m));
}

}  // namespace vsc::store
