#include "store/transaction.h"

#include <utility>

namespace vsc::store {

Result<Transaction> Transaction::Begin(Database& db, Mode mode) {
  const char* sql = mode == Mode::kDeferred    ? "BEGIN DEFERRED"
                    : mode == Mode::kImmediate ? "BEGIN IMMEDIATE"
                                               : "BEGIN EXCLUSIVE";
  VSC_RETURN_IF_ERROR(db.Exec(sql));
  return Transaction(&db);
}

Transaction::Transaction(Transaction&& other) noexcept : db_(std::exchange(other.db_, nullptr)) {}

Transaction::~Transaction() {
  if (db_ != nullptr) (void)Rollback();
}

Status Transaction::Commit() {
  if (db_ == nullptr) return FailedPrecondition("commit: the transaction has already ended");
  Status st = db_->Exec("COMMIT");
  if (!st.ok()) {
    // A failed COMMIT can leave the transaction open (SQLITE_BUSY); end it so the connection
    // is usable and the caller's view (not committed) is the truth.
    if (!db_->autocommit()) (void)db_->Exec("ROLLBACK");
    db_ = nullptr;
    return st.Annotate("transaction rolled back");
  }
  db_ = nullptr;
  return Status::Ok();
}

Status Transaction::Rollback() {
  if (db_ == nullptr) return FailedPrecondition("rollback: the transaction has already ended");
  Database* db = std::exchange(db_, nullptr);
  // SQLite may already have rolled back on its own (after SQLITE_FULL, SQLITE_NOMEM...), in
  // which case there is nothing left to undo.
  if (db->autocommit()) return Status::Ok();
  return db->Exec("ROLLBACK");
}

}  // namespace vsc::store
