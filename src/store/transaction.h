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
#include "store/statement.h"

namespace vsc::store {

class Transaction;

// BEGIN, COMMIT and ROLLBACK prepared once on a connection that runs transaction after
// transaction (a log's group commits): preparing them for every transaction costs more than
// running them. Lives on the Database's thread; the Database must outlive it.
class TransactionStatements {
 public:
  static Result<TransactionStatements> Prepare(Database& db, bool immediate = true);

 private:
  friend class Transaction;
  TransactionStatements(Database* db, Statement begin, Statement commit, Statement rollback)
      : db_(db),
        begin_(std::move(begin)),
        commit_(std::move(commit)),
        rollback_(std::move(rollback)) {}
  Database* db_;
  Statement begin_, commit_, rollback_;
};

class Transaction {
 public:
  enum class Mode { kDeferred, kImmediate, kExclusive };

  static Result<Transaction> Begin(Database& db, Mode mode = Mode::kImmediate);
  // The same with statements prepared once (they must outlive the Transaction).
  static Result<Transaction> Begin(TransactionStatements& prepared);

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
  Transaction(Database* db, TransactionStatements* prepared) : db_(db), prepared_(prepared) {}
  // Runs COMMIT or ROLLBACK: prepared once, or prepared now.
  Status End(Statement TransactionStatements::*prepared, const char* sql);

  Database* db_;  // null once committed or rolled back
  TransactionStatements* prepared_ = nullptr;
};

}  // namespace vsc::store
