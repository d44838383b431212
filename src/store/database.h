// Database: one SQLite connection, move-only, closed on destruction.
//
// Threading: a Database and its Statements belong to one thread at a time. Connections are
// opened with SQLITE_OPEN_NOMUTEX (no per-connection mutex), so the pattern is one connection
// per thread: one writer connection for the replication applier, one read connection per
// worker. WAL mode lets the readers run while the writer commits.
//
// Failures return a Status carrying SQLite's message and the statement or path:
// "prepare 'SELEC 1': near \"SELEC\": syntax error", "open '/x/y.db': unable to open database
// file". After a failure, extended_errcode() gives the SQLite result code (for replication
// digests, which record it).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"
#include "store/statement.h"

struct sqlite3;

namespace vsc::store {

struct OpenOptions {
  bool read_only = false;
  // Create the file when missing (ignored when read_only).
  bool create = true;
  // Put a writable database in WAL mode (persistent in the file). Read-only connections use
  // whatever mode the file is in.
  bool wal = true;
  // PRAGMA synchronous: OFF, NORMAL, FULL or EXTRA. Empty leaves SQLite's default.
  std::string synchronous = "NORMAL";
  // How long a statement waits for another connection's lock before failing with kUnavailable.
  int busy_timeout_ms = 5000;
  // PRAGMA mmap_size in bytes when > 0: reads come straight from the page cache of the kernel.
  int64_t mmap_bytes = 0;
  // With mmap_bytes: keep the map across commits of other connections (store/mapped_vfs.h), for
  // read connections of a database that is written while they read.
  bool keep_map = false;
  // PRAGMA cache_size in KiB when > 0 (SQLite's default is 2000 KiB).
  int cache_kib = 0;
};

class Database {
 public:
  // Opens (and with options.create, creates) the database at `path`; ":memory:" gives a private
  // in-memory database. Fails with kIo when the file cannot be opened, kDataLoss when it is
  // not a database, kInvalidArgument for a bad option.
  static Result<Database> Open(const std::string& path, const OpenOptions& options = {});

  Database(Database&& other) noexcept;
  Database& operator=(Database&& other) noexcept;
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;
  ~Database();

  // Runs every statement in `sql` (separated by ';') in order, discarding rows. Stops at the
  // first failure, whose message names the failing statement.
  Status Exec(std::string_view sql);

  // Prepares exactly one statement. `sql` may end with ';' and whitespace; anything after the
  // first statement is refused (kInvalidArgument), as is empty SQL. `persistent` hints that the
  // statement will be reused many times (SQLITE_PREPARE_PERSISTENT).
  Result<Statement> Prepare(std::string_view sql, bool persistent = false);

  // Rows changed by the most recent INSERT/UPDATE/DELETE on this connection.
  int64_t changes() const;
  int64_t last_insert_rowid() const;
  // Extended result code of the most recent failed call on this connection.
  int extended_errcode() const;
  bool autocommit() const;
  bool read_only() const { return read_only_; }
  const std::string& path() const { return path_; }

  // The raw connection, for SQLite features the wrapper does not cover (backup API, custom
  // functions, VFS hooks). Owned by this Database.
  sqlite3* handle() { return db_; }

 private:
  Database(sqlite3* db, std::string path, bool read_only)
      : db_(db), path_(std::move(path)), read_only_(read_only) {}
  Status Configure(const OpenOptions& options);

  sqlite3* db_ = nullptr;
  std::string path_;
  bool read_only_ = false;
};

}  // namespace vsc::store
