#include "store/database.h"

#include <sqlite3.h>

#include <utility>

#include "store/mapped_vfs.h"
#include "store/sqlite_error.h"

namespace vsc::store {
namespace {

// SQLite takes lengths as int and refuses statements above SQLITE_MAX_SQL_LENGTH anyway.
constexpr size_t kMaxSqlBytes = size_t{1} << 30;

bool IsBlank(std::string_view s) {
  // Whitespace, ';' and comments only: what sqlite3_prepare leaves as the tail of the last
  // statement when nothing follows it.
  size_t i = 0;
  while (i < s.size()) {
    char c = s[i];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == ';') {
      ++i;
    } else if (s.substr(i, 2) == "--") {
      size_t nl = s.find('\n', i);
      i = nl == std::string_view::npos ? s.size() : nl + 1;
    } else if (s.substr(i, 2) == "/*") {
      size_t end = s.find("*/", i + 2);
      i = end == std::string_view::npos ? s.size() : end + 2;
    } else {
      return false;
    }
  }
  return true;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() &&
         (s.front() == ' ' || s.front() == '\n' || s.front() == '\t' || s.front() == '\r')) {
    s.remove_prefix(1);
  }
  while (!s.empty() &&
         (s.back() == ' ' || s.back() == '\n' || s.back() == '\t' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

}  // namespace

Result<Database> Database::Open(const std::string& path, const OpenOptions& options) {
  if (!options.synchronous.empty() && options.synchronous != "OFF" &&
      options.synchronous != "NORMAL" && options.synchronous != "FULL" &&
      options.synchronous != "EXTRA") {
    return InvalidArgument("open '" + path +
                           "': synchronous must be OFF, NORMAL, FULL or EXTRA, not '" +
                           options.synchronous + "'");
  }
  int flags = SQLITE_OPEN_NOMUTEX;
  if (options.read_only) {
    flags |= SQLITE_OPEN_READONLY;
  } else {
    flags |= SQLITE_OPEN_READWRITE;
    if (options.create) flags |= SQLITE_OPEN_CREATE;
  }
  const char* vfs = nullptr;
  if (options.keep_map) {
    if (int rc = RegisterMappedVfs(); rc != SQLITE_OK) {
      return Internal(std::string("open '") + path +
                      "': cannot register the mapped VFS: " + sqlite3_errstr(rc));
    }
    vfs = kMappedVfsName;
  }
  sqlite3* raw = nullptr;
  int rc = sqlite3_open_v2(path.c_str(), &raw, flags, vfs);
  if (rc != SQLITE_OK) {
    Status st = SqliteStatus(rc, raw, "open", path);
    sqlite3_close_v2(raw);  // a handle is returned even on failure (null only when out of memory)
    return st;
  }
  Database db(raw, path, options.read_only);
  sqlite3_extended_result_codes(raw, 1);
  VSC_RETURN_IF_ERROR(db.Configure(options));
  return db;
}

Status Database::Configure(const OpenOptions& options) {
  sqlite3_busy_timeout(db_, options.busy_timeout_ms);
  // Opening is lazy: the first statement reads the header, so a file that is not a database is
  // reported here, at Open, rather than at the caller's first query.
  VSC_RETURN_IF_ERROR(Exec("PRAGMA schema_version"));
  if (!options.read_only && options.wal) {
    VSC_ASSIGN_OR_RETURN(Statement st, Prepare("PRAGMA journal_mode=WAL"));
    VSC_ASSIGN_OR_RETURN(bool row, st.Step());
    std::string mode = row ? std::string(st.ColumnText(0)) : std::string();
    // In-memory and temporary databases answer "memory"; there is no WAL for them to use.
    if (mode != "wal" && mode != "memory") {
      return FailedPrecondition("open '" + path_ + "': could not switch to WAL (journal_mode is '" +
                                mode + "')");
    }
  }
  if (!options.synchronous.empty()) {
    VSC_RETURN_IF_ERROR(Exec("PRAGMA synchronous=" + options.synchronous));
  }
  if (options.mmap_bytes > 0) {
    VSC_RETURN_IF_ERROR(Exec("PRAGMA mmap_size=" + std::to_string(options.mmap_bytes)));
  }
  if (options.cache_kib > 0) {
    VSC_RETURN_IF_ERROR(Exec("PRAGMA cache_size=-" + std::to_string(options.cache_kib)));
  }
  return Status::Ok();
}

Database::Database(Database&& other) noexcept
    : db_(std::exchange(other.db_, nullptr)),
      path_(std::move(other.path_)),
      read_only_(other.read_only_) {}

Database& Database::operator=(Database&& other) noexcept {
  if (this != &other) {
    sqlite3_close_v2(db_);
    db_ = std::exchange(other.db_, nullptr);
    path_ = std::move(other.path_);
    read_only_ = other.read_only_;
  }
  return *this;
}

// close_v2: statements still alive keep the connection as a zombie until they are finalized,
// so destruction order between a Database and its Statements does not matter.
Database::~Database() { sqlite3_close_v2(db_); }

Status Database::Exec(std::string_view sql) {
  if (sql.size() > kMaxSqlBytes) return InvalidArgument("exec: SQL longer than 1 GiB");
  while (!IsBlank(sql)) {
    sqlite3_stmt* raw = nullptr;
    const char* tail = nullptr;
    int rc = sqlite3_prepare_v2(db_, sql.data(), static_cast<int>(sql.size()), &raw, &tail);
    size_t used = static_cast<size_t>(tail - sql.data());
    if (rc != SQLITE_OK) {
      // On a syntax error the tail points at the error, not at the end of the statement; name
      // the statement up to its ';' instead.
      return SqliteStatus(rc, db_, "prepare", Trim(sql.substr(0, sql.find(';', used))));
    }
    std::string_view this_sql = Trim(sql.substr(0, used));
    sql.remove_prefix(used);
    if (raw == nullptr) {  // a comment or a lone ';'
      if (used == 0) break;
      continue;
    }
    Statement st(raw);
    for (;;) {
      rc = sqlite3_step(raw);
      if (rc == SQLITE_ROW) continue;
      if (rc == SQLITE_DONE) break;
      return SqliteStatus(rc, db_, "exec", this_sql);
    }
  }
  return Status::Ok();
}

Result<Statement> Database::Prepare(std::string_view sql, bool persistent) {
  if (sql.size() > kMaxSqlBytes) return InvalidArgument("prepare: SQL longer than 1 GiB");
  sqlite3_stmt* raw = nullptr;
  const char* tail = nullptr;
  int rc = sqlite3_prepare_v3(db_, sql.data(), static_cast<int>(sql.size()),
                              persistent ? SQLITE_PREPARE_PERSISTENT : 0, &raw, &tail);
  if (rc != SQLITE_OK) return SqliteStatus(rc, db_, "prepare", Trim(sql));
  Statement st(raw);
  if (raw == nullptr) {
    return InvalidArgument("prepare '" + std::string(Trim(sql)) + "': no statement in the SQL");
  }
  std::string_view rest = sql.substr(static_cast<size_t>(tail - sql.data()));
  if (!IsBlank(rest)) {
    return InvalidArgument("prepare '" + std::string(Trim(sql)) +
                           "': more than one statement; prepare one statement at a time");
  }
  return st;
}

int64_t Database::changes() const { return sqlite3_changes64(db_); }

int64_t Database::last_insert_rowid() const { return sqlite3_last_insert_rowid(db_); }

int Database::extended_errcode() const { return sqlite3_extended_errcode(db_); }

bool Database::autocommit() const { return sqlite3_get_autocommit(db_) != 0; }

}  // namespace vsc::store
