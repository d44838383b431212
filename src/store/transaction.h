// Transaction: RAII scope of one SQLite transaction on a Database.
//
// Begin() starts it (BEGIN IMMEDIATE by default: the write lock is taken up front, so a busy
// database fails at Begin with kUnavailable instead of half-way through). Commit() ends it;
// a Transaction destroyed without a successful Commit rolls back. Not nestable (SQLite refuses
// a BEGIN inside a transaction: Begin returns the error). Lives on the thread that owns the
// Database, which must outlive it.
#pragma once

#include "common/status.h"
#include "store/database.h"

namespace vsc::store {

class Transaction {
 public:
  enum class Mode { kDeferred, kImmediate, kExclusive };

  static Result<Transaction> Begin(Database& db, Mode mode = Mode::kImmediate);

  Transaction(Transaction&& other) noexcept;
  Transaction& operator=(Transaction&&) = delete;
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  ~Transaction();

  // COMMIT. On failure (e.g. kUnavailable when readers hold the lock past the busy timeout)
  // the transaction is rolled back, and the Status says so.
  Status Commit();
  // ROLLBACK now rather than at destruction, to see its Status.
  Status Rollback();
  bool active() const { return db_ != nullptr; }

 private:
  explicit Transaction(Database* db) : db_(db) {}

  Database* db_;  // null once committed or rolled back
};

}  // namespace vsc::store
