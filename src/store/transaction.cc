#include "store/transaction.h"

#include <utility>

namespace vsc::store {

Result<TransactionStatements> TransactionStatements::Prepare(Database& db, bool immediate) {
  VSC_ASSIGN_OR_RETURN(Statement begin,
                       db.Prepare(immediate ? "BEGIN IMMEDIATE" : "BEGIN DEFERRED", true));
  VSC_ASSIGN_OR_RETURN(Statement commit, db.Prepare("COMMIT", true));
  VSC_ASSIGN_OR_RETURN(Statement rollback, db.Prepare("ROLLBACK", true));
  return TransactionStatements(&db, std::move(begin), std::move(commit), std::move(rollback));
}

Result<Transaction> Transaction::Begin(Database& db, Mode mode) {
  const char* sql = mode == Mode::kDeferred    ? "BEGIN DEFERRED"
                    : mode == Mode::kImmediate ? "BEGIN IMMEDIATE"
                                               : "BEGIN EXCLUSIVE";
  VSC_RETURN_IF_ERROR(db.Exec(sql));
  return Transaction(&db, nullptr);
}

Result<Transaction> Transaction::Begin(TransactionStatements& prepared) {
  VSC_RETURN_IF_ERROR(prepared.begin_.Run());
  return Transaction(prepared.db_, &prepared);
}

Transaction::Transaction(Transaction&& other) noexcept
    : db_(std::exchange(other.db_, nullptr)), prepared_(other.prepared_) {}

Transaction::~Transaction() {
  if (db_ != nullptr) (void)Rollback();
}

Status Transaction::End(Statement TransactionStatements::*prepared, const char* sql) {
  return prepared_ != nullptr ? (prepared_->*prepared).Run() : db_->Exec(sql);
}

Status Transaction::Commit() {
  if (db_ == nullptr) return FailedPrecondition("commit: the transaction has already ended");
  Status st = End(&TransactionStatements::commit_, "COMMIT");
  if (!st.ok()) {
    // A failed COMMIT can leave the transaction open (SQLITE_BUSY); end it so the connection
    // is usable and the caller's view (not committed) is the truth.
    if (!db_->autocommit()) (void)End(&TransactionStatements::rollback_, "ROLLBACK");
    db_ = nullptr;
    return st.Annotate("transaction rolled back");
  }
  db_ = nullptr;
  return Status::Ok();
}

Status Transaction::Rollback() {
  if (db_ == nullptr) return FailedPrecondition("rollback: the transaction has already ended");
  Database* db = db_;
  // SQLite may already have rolled back on its own (after SQLITE_FULL, SQLITE_NOMEM...), in
  // which case there is nothing left to undo.
  Status st = db->autocommit() ? Status::Ok() : End(&TransactionStatements::rollback_, "ROLLBACK");
  db_ = nullptr;
  return st;
}

}  // namespace vsc::store
