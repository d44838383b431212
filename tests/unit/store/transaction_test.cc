#include "store/transaction.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "store/database.h"
#include "support/temp_dir.h"

namespace vsc::store {
namespace {

using test_support::TempDir;
using ::testing::HasSubstr;

int64_t Count(Database& db) {
  Result<Statement> st = db.Prepare("SELECT count(*) FROM t");
  EXPECT_TRUE(st.ok());
  EXPECT_TRUE(*st->Step());
  return st->ColumnInt64(0);
}

class TransactionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Result<Database> db = Database::Open(dir_.File("t.db"));
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    db_.emplace(std::move(*db));
    ASSERT_TRUE(db_->Exec("CREATE TABLE t(x INTEGER PRIMARY KEY)").ok());
  }

  // A second connection that fails at once on a lock instead of waiting.
  Result<Database> OpenImpatient() {
    OpenOptions impatient;
    impatient.busy_timeout_ms = 0;
    return Database::Open(dir_.File("t.db"), impatient);
  }
  // A deferred foreign-key violation makes COMMIT itself fail.
  void AddDeferredChild() {
    ASSERT_TRUE(
        db_->Exec("PRAGMA foreign_keys=ON;"
                  "CREATE TABLE child(p INTEGER REFERENCES t(x) DEFERRABLE INITIALLY DEFERRED)")
            .ok());
  }
  // Inserts a row and the violation; COMMIT (run as `how`: exec or step) fails and rolls back.
  void ExpectCommitRollsBack(Transaction& tx, const std::string& how) {
    ASSERT_TRUE(db_->Exec("INSERT INTO t VALUES(1); INSERT INTO child VALUES(99)").ok());
    Status st = tx.Commit();
    ASSERT_FALSE(st.ok());
    EXPECT_EQ(st.code(), Code::kFailedPrecondition);
    EXPECT_EQ(st.message(),
              "transaction rolled back: " + how + " 'COMMIT': FOREIGN KEY constraint failed");
    EXPECT_FALSE(tx.active());
    EXPECT_TRUE(db_->autocommit());
    EXPECT_EQ(Count(*db_), 0);
  }

  TempDir dir_;
  std::optional<Database> db_;
};

TEST_F(TransactionTest, DestructionWithoutCommitRollsBack) {
  {
    Result<Transaction> tx = Transaction::Begin(*db_);
    ASSERT_TRUE(tx.ok()) << tx.status().ToString();
    EXPECT_TRUE(tx->active());
    EXPECT_FALSE(db_->autocommit());
    ASSERT_TRUE(db_->Exec("INSERT INTO t VALUES(1), (2), (3)").ok());
    EXPECT_EQ(Count(*db_), 3);
  }
  EXPECT_TRUE(db_->autocommit());
  EXPECT_EQ(Count(*db_), 0);
}

TEST_F(TransactionTest, CommitKeepsTheRowsAndEndsTheTransaction) {
  Result<Transaction> tx = Transaction::Begin(*db_);
  ASSERT_TRUE(tx.ok());
  ASSERT_TRUE(db_->Exec("INSERT INTO t VALUES(1), (2)").ok());
  ASSERT_TRUE(tx->Commit().ok());
  EXPECT_FALSE(tx->active());
  EXPECT_TRUE(db_->autocommit());
  Status again = tx->Commit();
  EXPECT_EQ(again.code(), Code::kFailedPrecondition);
  EXPECT_EQ(tx->Rollback().code(), Code::kFailedPrecondition);
  EXPECT_EQ(Count(*db_), 2);
}

TEST_F(TransactionTest, ExplicitRollbackAndMovedFromTransaction) {
  Result<Transaction> tx = Transaction::Begin(*db_, Transaction::Mode::kDeferred);
  ASSERT_TRUE(tx.ok());
  ASSERT_TRUE(db_->Exec("INSERT INTO t VALUES(7)").ok());
  Transaction moved = std::move(*tx);
  EXPECT_FALSE(tx->active());  // the moved-from one will not roll back a second time
  EXPECT_TRUE(moved.active());
  ASSERT_TRUE(moved.Rollback().ok());
  EXPECT_EQ(Count(*db_), 0);
  // The connection can start a new transaction afterwards.
  Result<Transaction> next = Transaction::Begin(*db_, Transaction::Mode::kExclusive);
  ASSERT_TRUE(next.ok()) << next.status().ToString();
  ASSERT_TRUE(next->Commit().ok());
}

TEST_F(TransactionTest, NestedBeginIsRefused) {
  Result<Transaction> outer = Transaction::Begin(*db_);
  ASSERT_TRUE(outer.ok());
  Result<Transaction> inner = Transaction::Begin(*db_);
  ASSERT_FALSE(inner.ok());
  EXPECT_THAT(inner.status().message(),
              HasSubstr("cannot start a transaction within a transaction"));
  EXPECT_TRUE(outer->active());
  EXPECT_FALSE(db_->autocommit());
}

TEST_F(TransactionTest, SecondWriterIsUnavailableWhileTheFirstHoldsTheLock) {
  Result<Database> other = OpenImpatient();
  ASSERT_TRUE(other.ok());

  Result<Transaction> first = Transaction::Begin(*db_);
  ASSERT_TRUE(first.ok());
  Result<Transaction> second = Transaction::Begin(*other);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), Code::kUnavailable);
  EXPECT_EQ(second.status().message(), "exec 'BEGIN IMMEDIATE': database is locked");

  ASSERT_TRUE(first->Commit().ok());
  Result<Transaction> third = Transaction::Begin(*other);
  EXPECT_TRUE(third.ok()) << third.status().ToString();
}

TEST_F(TransactionTest, FailedCommitReportsRollback) {
  AddDeferredChild();
  Result<Transaction> tx = Transaction::Begin(*db_);
  ASSERT_TRUE(tx.ok());
  ExpectCommitRollsBack(*tx, "exec");
}

// TransactionStatements: BEGIN, COMMIT and ROLLBACK prepared once serve transaction after
// transaction with the same effects as the unprepared ones.
TEST_F(TransactionTest, PreparedStatementsServeTransactionAfterTransaction) {
  Result<TransactionStatements> prepared = TransactionStatements::Prepare(*db_);
  ASSERT_TRUE(prepared.ok()) << prepared.status().ToString();
  for (int i = 1; i <= 3; ++i) {
    Result<Transaction> tx = Transaction::Begin(*prepared);
    ASSERT_TRUE(tx.ok()) << tx.status().ToString();
    EXPECT_FALSE(db_->autocommit());
    ASSERT_TRUE(db_->Exec("INSERT INTO t VALUES(" + std::to_string(i) + ")").ok());
    ASSERT_TRUE(tx->Commit().ok());
    EXPECT_TRUE(db_->autocommit());
    EXPECT_EQ(Count(*db_), i);
  }
  {
    Result<Transaction> dropped = Transaction::Begin(*prepared);
    ASSERT_TRUE(dropped.ok());
    ASSERT_TRUE(db_->Exec("INSERT INTO t VALUES(10)").ok());
  }
  EXPECT_TRUE(db_->autocommit());
  EXPECT_EQ(Count(*db_), 3);
  Result<Transaction> undone = Transaction::Begin(*prepared);
  ASSERT_TRUE(undone.ok());
  ASSERT_TRUE(db_->Exec("INSERT INTO t VALUES(11)").ok());
  Transaction moved = std::move(*undone);
  ASSERT_TRUE(moved.Rollback().ok());
  EXPECT_EQ(moved.Rollback().code(), Code::kFailedPrecondition);
  EXPECT_EQ(Count(*db_), 3);
  // BEGIN IMMEDIATE: the write lock is taken at Begin.
  Result<Database> other = OpenImpatient();
  ASSERT_TRUE(other.ok());
  Result<Transaction> held = Transaction::Begin(*prepared);
  ASSERT_TRUE(held.ok());
  Result<Transaction> second = Transaction::Begin(*other);
  EXPECT_EQ(second.status().code(), Code::kUnavailable);
}

TEST_F(TransactionTest, PreparedFailedCommitRollsBackAndTheNextTransactionRuns) {
  AddDeferredChild();
  Result<TransactionStatements> prepared = TransactionStatements::Prepare(*db_);
  ASSERT_TRUE(prepared.ok()) << prepared.status().ToString();
  Result<Transaction> tx = Transaction::Begin(*prepared);
  ASSERT_TRUE(tx.ok());
  ExpectCommitRollsBack(*tx, "step");
  Result<Transaction> next = Transaction::Begin(*prepared);
  ASSERT_TRUE(next.ok()) << next.status().ToString();
  ASSERT_TRUE(db_->Exec("INSERT INTO t VALUES(2)").ok());
  ASSERT_TRUE(next->Commit().ok());
  EXPECT_EQ(Count(*db_), 1);
}

}  // namespace
}  // namespace vsc::store
