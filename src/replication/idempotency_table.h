// IdempotencyTable: the keys a replica has applied (issue 11), in its own database, table
// `_vsc_idempotency(key TEXT PRIMARY KEY, seq, code, rows_changed, error, failed_statement,
// statements BLOB)`, written by the SqliteExecutor in the transaction that applies the entry,
// so a key and its write commit together or not at all.
// - Prune(seq, window) runs before every keyed entry is looked up: keys recorded before
//   OldestRemembered(seq, window) go. It depends only on the entry stream, so every replica's
//   table stays the same (the digest chain covers each keyed entry's duplicate_of; the content
//   checksum, like every _vsc_ table, leaves the table out).
// - Find(key) is the recorded outcome (with duplicate_of = the seq it was applied at), if any.
// - Record(key, result) stores an entry's outcome, failures included: a retry of a write that
//   failed gets the same failure, even if it would succeed now.
// Thread: the executor's (the replica's writer thread). Lifetime: within its connection's.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "common/status.h"
#include "replication/entry.h"

struct sqlite3;
struct sqlite3_stmt;

namespace vsc::replication {

class IdempotencyTable {
 public:
  // Creates the table (and its seq index) when missing: a replica file from before has none.
  static Result<std::unique_ptr<IdempotencyTable>> Open(sqlite3* db, std::string path);
  ~IdempotencyTable();
  IdempotencyTable(const IdempotencyTable&) = delete;
  IdempotencyTable& operator=(const IdempotencyTable&) = delete;

  Status Prune(uint64_t seq, uint64_t window);
  Result<std::optional<EntryResult>> Find(const std::string& key);
  Status Record(const std::string& key, const EntryResult& result);

 private:
  IdempotencyTable(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}
  Status Error(int rc, const char* what) const;
  // The statement for `sql` in `slot`, prepared on first use; the rc on failure.
  int Prepared(sqlite3_stmt*& slot, const char* sql);

  sqlite3* db_;
  std::string path_;
  sqlite3_stmt* prune_ = nullptr;
  sqlite3_stmt* find_ = nullptr;
  sqlite3_stmt* record_ = nullptr;
};

}  // namespace vsc::replication
