// SqliteExecutor (replica_store.h): the production Executor over a replica's SQLite file.
#include <sqlite3.h>

#include <unordered_map>

#include "common/random.h"
#include "replication/idempotency_table.h"
#include "replication/replica_store.h"
#include "replication/replica_vfs.h"
#include "replication/sql_util.h"
#include "store/sqlite_error.h"

namespace vsc::replication {
namespace {

constexpr size_t kMaxCachedStatements = 256;

uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// Failures that depend on this replica, not on the entry: the batch must be abandoned, because
// another replica would not fail the same way.
bool IsLocalFailure(int rc) {
  switch (rc & 0xff) {
    case SQLITE_IOERR:
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
    case SQLITE_FULL:
    case SQLITE_NOMEM:
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
    case SQLITE_CANTOPEN:
    case SQLITE_PROTOCOL:
    case SQLITE_READONLY:
    case SQLITE_PERM:
    case SQLITE_INTERRUPT:
    case SQLITE_MISUSE:
    case SQLITE_INTERNAL:
    case SQLITE_NOLFS:
      return true;
    default:
      return false;
  }
}

// What random() and randomblob() draw from: seeded from (epoch, seq) of the entry being applied
// and the call's position within the entry, so every replica draws the same values in the same
// order. Outside an entry (never on the writer in practice) SQLite's own generator is used.
struct RandomSource {
  bool active = false;
  uint64_t epoch = 0;
  uint64_t seq = 0;
  uint64_t calls = 0;

  Random Next() { return Random(Mix(Mix(Mix(epoch) ^ seq) ^ calls++)); }
};

void RandomFunction(sqlite3_context* ctx, int, sqlite3_value**) {
  auto* src = static_cast<RandomSource*>(sqlite3_user_data(ctx));
  int64_t r = 0;
  if (src->active) {
    r = static_cast<int64_t>(src->Next().Next());
  } else {
    sqlite3_randomness(sizeof r, &r);
  }
  // As SQLite's random(): never INT64_MIN, so abs(random()) cannot overflow.
  if (r < 0) r = -(r & INT64_MAX);
  sqlite3_result_int64(ctx, r);
}

void RandomBlobFunction(sqlite3_context* ctx, int, sqlite3_value** argv) {
  auto* src = static_cast<RandomSource*>(sqlite3_user_data(ctx));
  sqlite3_int64 n = sqlite3_value_int64(argv[0]);
  if (n < 1) n = 1;
  if (n > sqlite3_limit(sqlite3_context_db_handle(ctx), SQLITE_LIMIT_LENGTH, -1)) {
    sqlite3_result_error_toobig(ctx);
    return;
  }
  std::string bytes(static_cast<size_t>(n), '\0');
  if (src->active) {
    Random rng = src->Next();
    for (size_t i = 0; i < bytes.size(); i += 8) {
      uint64_t v = rng.Next();
      for (size_t k = 0; k < 8 && i + k < bytes.size(); ++k) {
        bytes[i + k] = static_cast<char>(v >> (8 * k));
      }
    }
  } else {
    sqlite3_randomness(static_cast<int>(n), bytes.data());
  }
  sqlite3_result_blob64(ctx, bytes.data(), bytes.size(), SQLITE_TRANSIENT);
}

class SqliteExecutor : public Executor {
 public:
  ~SqliteExecutor() override {
    ClearCache();
    keys_.reset();
    sqlite3_close_v2(db_);
  }

  static Result<std::unique_ptr<Executor>> Open(const std::string& path,
                                                const ReplicaOptions& options);

  Result<ReplicaState> LoadState() override;
  Status Begin() override;
  Result<EntryResult> Execute(const Entry& entry) override;
  Status Commit(const ReplicaState& state) override;
  void Rollback() override;

 private:
  static int Authorize(void* self, int action, const char* a3, const char*, const char*,
                       const char*);
  Status Exec(const char* sql);
  // A replica file from before issue 11 has no fence_epoch column: add it (0, fences nothing).
  Status AddFenceColumn();
  Status Error(int rc, std::string_view what) const {
    return store::SqliteStatus(rc, db_, "replica " + std::string(what), path_);
  }
  // A cached prepared statement for `sql`; the rc of prepare on failure (stmt is null).
  int Prepared(const std::string& sql, sqlite3_stmt** out);
  void ClearCache();
  // Runs one entry inside its savepoint; sets *txn_lost when a statement ended the transaction.
  Result<EntryResult> RunEntry(const Entry& entry, bool* txn_lost);
  // A keyed entry whose key was applied within its window applies nothing (the original's
  // outcome, duplicate_of set); else RunStatements, and the key is recorded with the outcome.
  Result<EntryResult> RunWrite(const Entry& entry, bool* txn_lost);
  Result<EntryResult> RunStatements(const Entry& entry, bool* txn_lost);

  sqlite3* db_ = nullptr;
  std::unique_ptr<IdempotencyTable> keys_;
  std::string path_;
  bool user_ = false;  // the authorizer restricts only the entries' own statements
  RandomSource random_;
  std::unordered_map<std::string, sqlite3_stmt*> cache_;
  std::vector<Entry> txn_entries_;  // applied in the open transaction (for a lost transaction)
  bool in_txn_ = false;
};

int SqliteExecutor::Authorize(void* self, int action, const char* a3, const char*, const char*,
                              const char*) {
  auto* ex = static_cast<SqliteExecutor*>(self);
  if (!ex->user_) return SQLITE_OK;
  switch (action) {
    case SQLITE_TRANSACTION:
    case SQLITE_SAVEPOINT:
    case SQLITE_ATTACH:
    case SQLITE_DETACH:
    case SQLITE_PRAGMA:
    case SQLITE_CREATE_TEMP_INDEX:
    case SQLITE_CREATE_TEMP_TABLE:
    case SQLITE_CREATE_TEMP_TRIGGER:
    case SQLITE_CREATE_TEMP_VIEW:
    case SQLITE_CREATE_VTABLE:
      return SQLITE_DENY;
    case SQLITE_INSERT:
    case SQLITE_UPDATE:
    case SQLITE_DELETE:
    case SQLITE_DROP_TABLE:
    case SQLITE_ALTER_TABLE:
      if (a3 != nullptr && std::string_view(a3).substr(0, 5) == "_vsc_") return SQLITE_DENY;
      return SQLITE_OK;
    default:
      return SQLITE_OK;
  }
}

Result<std::unique_ptr<Executor>> SqliteExecutor::Open(const std::string& path,
                                                       const ReplicaOptions& options) {
  const std::string& sync = options.synchronous;
  if (sync != "OFF" && sync != "NORMAL" && sync != "FULL" && sync != "EXTRA") {
    return InvalidArgument("replica '" + path +
                           "': synchronous must be OFF, NORMAL, FULL or "
                           "EXTRA, not '" +
                           sync + "'");
  }
  if (int rc = RegisterReplicaVfs(); rc != SQLITE_OK) {
    return Internal(std::string("replica: cannot register the replica VFS: ") + sqlite3_errstr(rc));
  }
  std::unique_ptr<SqliteExecutor> ex(new SqliteExecutor());
  ex->path_ = path;
  const int rc = sqlite3_open_v2(path.c_str(), &ex->db_,
                                 SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                                 kReplicaVfsName);
  if (rc != SQLITE_OK) return ex->Error(rc, "open");
  sqlite3_extended_result_codes(ex->db_, 1);
  sqlite3_busy_timeout(ex->db_, 5000);
  VSC_RETURN_IF_ERROR(ex->Exec("PRAGMA journal_mode=WAL"));
  VSC_RETURN_IF_ERROR(ex->Exec(("PRAGMA synchronous=" + sync).c_str()));
  // Updates and deletes hit random pages of the table: with SQLite's default 2 MiB cache nearly
  // every one reads its leaf and interior pages back with pread. 64 MiB keeps the B-tree's
  // upper levels and a working set of leaves in the writer's own cache (memory, not a limit on
  // the database's size).
  VSC_RETURN_IF_ERROR(ex->Exec("PRAGMA cache_size=-65536"));
  VSC_RETURN_IF_ERROR(
      ex->Exec("CREATE TABLE IF NOT EXISTS _vsc_replica(id INTEGER PRIMARY KEY CHECK (id = 0), "
               "epoch INTEGER NOT NULL, applied_seq INTEGER NOT NULL, digest BLOB NOT NULL, "
               "fence_epoch INTEGER NOT NULL DEFAULT 0)"));
  VSC_RETURN_IF_ERROR(ex->AddFenceColumn());
  VSC_ASSIGN_OR_RETURN(ex->keys_, IdempotencyTable::Open(ex->db_, path));
  for (auto [name, nargs, fn] : {std::tuple{"random", 0, &RandomFunction},
                                 std::tuple{"randomblob", 1, &RandomBlobFunction}}) {
    const int frc = sqlite3_create_function_v2(ex->db_, name, nargs, SQLITE_UTF8, &ex->random_, fn,
                                               nullptr, nullptr, nullptr);
    if (frc != SQLITE_OK) return ex->Error(frc, std::string("register ") + name + "()");
  }
  sqlite3_set_authorizer(ex->db_, &SqliteExecutor::Authorize, ex.get());
  return std::unique_ptr<Executor>(std::move(ex));
}

Status SqliteExecutor::AddFenceColumn() {
  sqlite3_stmt* st = nullptr;
  int rc = sqlite3_prepare_v2(
      db_, "SELECT count(*) FROM pragma_table_info('_vsc_replica') WHERE name = 'fence_epoch'", -1,
      &st, nullptr);
  if (rc != SQLITE_OK) return Error(rc, "read the state table's columns");
  rc = sqlite3_step(st);
  const bool has = rc == SQLITE_ROW && sqlite3_column_int64(st, 0) > 0;
  sqlite3_finalize(st);
  if (rc != SQLITE_ROW) return Error(rc, "read the state table's columns");
  if (has) return Status::Ok();
  return Exec("ALTER TABLE _vsc_replica ADD COLUMN fence_epoch INTEGER NOT NULL DEFAULT 0");
}

Status SqliteExecutor::Exec(const char* sql) {
  // Cached: SAVEPOINT/RELEASE run for every entry.
  sqlite3_stmt* st = nullptr;
  int rc = Prepared(sql, &st);
  while (rc == SQLITE_OK && st != nullptr) {
    const int step = sqlite3_step(st);
    if (step == SQLITE_DONE) break;
    if (step != SQLITE_ROW) rc = step;
  }
  if (st != nullptr) sqlite3_reset(st);
  if (rc != SQLITE_OK) return Error(rc, std::string("'") + sql + "'");
  return Status::Ok();
}

int SqliteExecutor::Prepared(const std::string& sql, sqlite3_stmt** out) {
  if (auto it = cache_.find(sql); it != cache_.end()) {
    *out = it->second;
    return SQLITE_OK;
  }
  if (cache_.size() >= kMaxCachedStatements) ClearCache();
  const char* tail = nullptr;
  const int rc = sqlite3_prepare_v3(db_, sql.data(), static_cast<int>(sql.size()),
                                    SQLITE_PREPARE_PERSISTENT, out, &tail);
  if (rc != SQLITE_OK) return rc;
  if (*out == nullptr) return SQLITE_OK;  // blank SQL: nothing to run
  cache_.emplace(sql, *out);
  return SQLITE_OK;
}

void SqliteExecutor::ClearCache() {
  for (auto& [sql, stmt] : cache_) sqlite3_finalize(stmt);
  cache_.clear();
}

Result<ReplicaState> SqliteExecutor::LoadState() {
  sqlite3_stmt* st = nullptr;
  int rc = Prepared("SELECT epoch, applied_seq, digest, fence_epoch FROM _vsc_replica WHERE id = 0",
                    &st);
  if (rc != SQLITE_OK) return Error(rc, "load state");
  ReplicaState state;
  rc = sqlite3_step(st);
  if (rc == SQLITE_ROW) {
    state.epoch = static_cast<uint64_t>(sqlite3_column_int64(st, 0));
    state.applied_seq = static_cast<uint64_t>(sqlite3_column_int64(st, 1));
    const auto n = static_cast<size_t>(sqlite3_column_bytes(st, 2));
    const auto* p = static_cast<const uint8_t*>(sqlite3_column_blob(st, 2));
    if (n != state.digest.size()) {
      sqlite3_reset(st);
      return DataLoss("replica '" + path_ + "': stored digest has " + std::to_string(n) +
                      " bytes; the database is damaged");
    }
    std::copy(p, p + n, state.digest.begin());
    state.fence_epoch = static_cast<uint64_t>(sqlite3_column_int64(st, 3));
    rc = sqlite3_step(st);
  }
  sqlite3_reset(st);
  if (rc != SQLITE_DONE) return Error(rc, "load state");
  return state;
}

Status SqliteExecutor::Begin() {
  if (in_txn_) return Internal("replica: Begin inside a transaction");
  VSC_RETURN_IF_ERROR(Exec("BEGIN IMMEDIATE"));
  in_txn_ = true;
  txn_entries_.clear();
  return Status::Ok();
}

Result<EntryResult> SqliteExecutor::Execute(const Entry& entry) {
  if (!in_txn_) return Internal("replica: Execute outside a transaction");
  bool lost = false;
  VSC_ASSIGN_OR_RETURN(EntryResult result, RunEntry(entry, &lost));
  if (lost) {
    // The entry's statement rolled back the whole transaction (RAISE(ROLLBACK), ON CONFLICT
    // ROLLBACK). Its own failure is its result, as on a replica that applied it first in a
    // batch; the earlier entries of this batch are redone, which gives the same results.
    VSC_RETURN_IF_ERROR(Exec("BEGIN IMMEDIATE"));
    for (const Entry& earlier : txn_entries_) {
      bool lost_again = false;
      VSC_ASSIGN_OR_RETURN(EntryResult again, RunEntry(earlier, &lost_again));
      if (lost_again)
        return Internal("replica: redoing seq " + std::to_string(earlier.seq) +
                        " lost the transaction again");
      (void)again;
    }
    // Its key goes with its failure, as on the replica that applied it first in a batch.
    if (!entry.idempotency_key.empty()) {
      VSC_RETURN_IF_ERROR(keys_->Prune(entry.seq, entry.idempotency_window));
      VSC_RETURN_IF_ERROR(keys_->Record(entry.idempotency_key, result));
    }
  }
  // Only entries that changed something need redoing after a lost transaction (a keyed one
  // recorded its key even when it failed).
  if (entry.kind == Entry::Kind::kWrite && (result.code == 0 || !entry.idempotency_key.empty())) {
    txn_entries_.push_back(entry);
  }
  return result;
}

Result<EntryResult> SqliteExecutor::RunEntry(const Entry& entry, bool* txn_lost) {
  ClockPin pin(entry.ts_micros);
  random_ = RandomSource{true, entry.epoch, entry.seq, 0};
  Result<EntryResult> r = entry.kind == Entry::Kind::kChecksum ? [&]() -> Result<EntryResult> {
    VSC_ASSIGN_OR_RETURN(std::string sum, ChecksumConnection(db_));
    EntryResult c;
    c.seq = entry.seq;
    c.checksum = std::move(sum);
    return c;
  }()
      : RunWrite(entry, txn_lost);
  random_.active = false;
  return r;
}

Result<EntryResult> SqliteExecutor::RunWrite(const Entry& entry, bool* txn_lost) {
  const std::string& key = entry.idempotency_key;
  if (key.empty()) return RunStatements(entry, txn_lost);
  VSC_RETURN_IF_ERROR(keys_->Prune(entry.seq, entry.idempotency_window));
  VSC_ASSIGN_OR_RETURN(std::optional<EntryResult> original, keys_->Find(key));
  if (original) {
    original->seq = entry.seq;
    return std::move(*original);
  }
  VSC_ASSIGN_OR_RETURN(EntryResult result, RunStatements(entry, txn_lost));
  // A lost transaction took the prune with it: Execute records the key after the redo.
  if (!*txn_lost) VSC_RETURN_IF_ERROR(keys_->Record(key, result));
  return result;
}

Result<EntryResult> SqliteExecutor::RunStatements(const Entry& entry, bool* txn_lost) {
  EntryResult result;
  result.seq = entry.seq;
  VSC_RETURN_IF_ERROR(Exec("SAVEPOINT vsc_entry"));
  int failed = SQLITE_OK;
  for (size_t k = 0; k < entry.statements.size(); ++k) {
    const Statement& s = entry.statements[k];
    sqlite3_stmt* st = nullptr;
    user_ = true;
    int rc = Prepared(s.sql, &st);
    if (st != nullptr) {
      for (size_t i = 0; rc == SQLITE_OK && i < s.params.size(); ++i) {
        rc = BindValue(st, static_cast<int>(i + 1), s.params[i]);
      }
      const int64_t before = sqlite3_total_changes64(db_);
      // Reset, so the rowid reported is this statement's own and the same on every replica
      // (a replica that restarted has no carry-over from earlier statements).
      sqlite3_set_last_insert_rowid(db_, 0);
      while (rc == SQLITE_OK) {
        const int step = sqlite3_step(st);
        if (step == SQLITE_DONE) break;
        if (step != SQLITE_ROW) rc = step;
      }
      // changes() is stale after a statement that changed nothing (DDL, SELECT): count it only
      // when the statement did change rows.
      StatementResult one;
      if (rc == SQLITE_OK && sqlite3_total_changes64(db_) != before) {
        one.rows_affected = sqlite3_changes64(db_);
        result.rows_changed += one.rows_affected;
      }
      one.last_insert_id = sqlite3_last_insert_rowid(db_);
      result.statements.push_back(one);
      sqlite3_reset(st);
      sqlite3_clear_bindings(st);
    }
    user_ = false;
    if (rc != SQLITE_OK) {
      failed = rc;
      result.error = sqlite3_errmsg(db_);
      result.failed_statement = static_cast<uint32_t>(k + 1);
      break;
    }
  }
  if (failed == SQLITE_OK) {
    VSC_RETURN_IF_ERROR(Exec("RELEASE vsc_entry"));
    return result;
  }
  if (IsLocalFailure(failed)) {
    return store::SqliteStatus(failed, db_, "replica apply seq " + std::to_string(entry.seq),
                               path_);
  }
  result.code = failed & 0xff;
  result.rows_changed = 0;
  // What the statements before the failing one did, although rolled back: rqlite reports them
  // (their last_insert_id and rows_affected) ahead of the error.
  result.statements.resize(std::min<size_t>(result.statements.size(), result.failed_statement - 1));
  if (sqlite3_get_autocommit(db_) != 0) {
    *txn_lost = true;
    return result;
  }
  VSC_RETURN_IF_ERROR(Exec("ROLLBACK TO vsc_entry"));
  VSC_RETURN_IF_ERROR(Exec("RELEASE vsc_entry"));
  return result;
}

Status SqliteExecutor::Commit(const ReplicaState& state) {
  if (!in_txn_) return Internal("replica: Commit outside a transaction");
  sqlite3_stmt* st = nullptr;
  int rc = Prepared(
      "INSERT INTO _vsc_replica(id, epoch, applied_seq, digest, fence_epoch) "
      "VALUES(0, ?1, ?2, ?3, ?4) "
      "ON CONFLICT(id) DO UPDATE SET epoch = ?1, applied_seq = ?2, digest = ?3, fence_epoch = ?4",
      &st);
  if (rc == SQLITE_OK) {
    sqlite3_bind_int64(st, 1, static_cast<int64_t>(state.epoch));
    sqlite3_bind_int64(st, 2, static_cast<int64_t>(state.applied_seq));
    sqlite3_bind_blob(st, 3, state.digest.data(), static_cast<int>(state.digest.size()),
                      SQLITE_TRANSIENT);
    sqlite3_bind_int64(st, 4, static_cast<int64_t>(state.fence_epoch));
    rc = sqlite3_step(st);
    sqlite3_reset(st);
    if (rc == SQLITE_DONE) rc = SQLITE_OK;
  }
  if (rc != SQLITE_OK) {
    Status err = Error(rc, "store state");
    Rollback();
    return err;
  }
  if (Status err = Exec("COMMIT"); !err.ok()) {
    Rollback();
    return err;
  }
  in_txn_ = false;
  txn_entries_.clear();
  return Status::Ok();
}

void SqliteExecutor::Rollback() {
  if (sqlite3_get_autocommit(db_) == 0) {
    // Best effort: if even ROLLBACK fails the connection is unusable and the next Begin says so.
    (void)Exec("ROLLBACK");
  }
  in_txn_ = false;
  txn_entries_.clear();
}

}  // namespace

Result<std::unique_ptr<Executor>> OpenSqliteExecutor(const std::string& path,
                                                     const ReplicaOptions& options) {
  return SqliteExecutor::Open(path, options);
}

}  // namespace vsc::replication
