#include "store/database.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "common/random.h"
#include "store/statement.h"
#include "support/temp_dir.h"

namespace vsc::store {
namespace {

using ::testing::HasSubstr;
using test_support::TempDir;

Database OpenMemory() {
  Result<Database> db = Database::Open(":memory:");
  EXPECT_TRUE(db.ok()) << db.status().ToString();
  return std::move(db).value();
}

int64_t CountRows(Database& db, const std::string& table) {
  Result<Statement> st = db.Prepare("SELECT count(*) FROM " + table);
  EXPECT_TRUE(st.ok()) << st.status().ToString();
  Result<bool> row = st->Step();
  EXPECT_TRUE(row.ok() && *row);
  return st->ColumnInt64(0);
}

TEST(DatabaseTest, PrepareErrorCarriesSqlAndSqliteMessage) {
  Database db = OpenMemory();
  Result<Statement> st = db.Prepare("SELEC 1");
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.status().code(), Code::kInvalidArgument);
  EXPECT_EQ(st.status().message(), "prepare 'SELEC 1': near \"SELEC\": syntax error");
  EXPECT_EQ(db.extended_errcode(), SQLITE_ERROR);
}

TEST(DatabaseTest, PrepareRefusesSeveralStatementsAndEmptySql) {
  Database db = OpenMemory();
  Result<Statement> two = db.Prepare("SELECT 1; SELECT 2");
  ASSERT_FALSE(two.ok());
  EXPECT_EQ(two.status().code(), Code::kInvalidArgument);
  EXPECT_THAT(two.status().message(), HasSubstr("more than one statement"));
  EXPECT_THAT(two.status().message(), HasSubstr("SELECT 1; SELECT 2"));

  for (const char* blank : {"", "  ", ";", "-- nothing\n", "/* c */"}) {
    Result<Statement> empty = db.Prepare(blank);
    ASSERT_FALSE(empty.ok()) << "'" << blank << "'";
    EXPECT_THAT(empty.status().message(), HasSubstr("no statement")) << "'" << blank << "'";
  }
  // A trailing ';', whitespace and comments are not a second statement.
  for (const char* one :
       {"SELECT 1;", "SELECT 1 ;  \n", "SELECT 1; -- done", "SELECT 1;/* x */;"}) {
    EXPECT_TRUE(db.Prepare(one).ok()) << one;
  }
}

TEST(DatabaseTest, ExecRunsEveryStatementAndNamesTheFailingOne) {
  Database db = OpenMemory();
  ASSERT_TRUE(db.Exec("CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT);"
                      "INSERT INTO t VALUES(1, 'a'); -- comment\n"
                      "INSERT INTO t VALUES(2, 'b');")
                  .ok());
  EXPECT_EQ(CountRows(db, "t"), 2);

  Status st = db.Exec(
      "INSERT INTO t VALUES(3, 'c'); INSERT INTO t VALUES(1, 'dup'); "
      "INSERT INTO t VALUES(4, 'd')");
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), Code::kAlreadyExists);
  EXPECT_EQ(st.message(), "exec 'INSERT INTO t VALUES(1, 'dup');': UNIQUE constraint failed: t.id");
  // Statements before the failure ran; those after it did not.
  EXPECT_EQ(CountRows(db, "t"), 3);

  Status bad = db.Exec("SELECT 1; SELEC 2");
  EXPECT_EQ(bad.message(), "prepare 'SELEC 2': near \"SELEC\": syntax error");
}

TEST(DatabaseTest, StepErrorsCarryCodeAndSql) {
  Database db = OpenMemory();
  ASSERT_TRUE(db.Exec("CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT NOT NULL, "
                      "n INTEGER CHECK (n >= 0))")
                  .ok());
  Result<Statement> ins = db.Prepare("INSERT INTO t(id, v, n) VALUES(?1, ?2, ?3)");
  ASSERT_TRUE(ins.ok());
  ASSERT_TRUE(ins->Bind(1, 1).ok());
  ASSERT_TRUE(ins->Bind(2, "x").ok());
  ASSERT_TRUE(ins->Bind(3, 5).ok());
  ASSERT_TRUE(ins->Run().ok());
  EXPECT_EQ(db.changes(), 1);
  EXPECT_EQ(db.last_insert_rowid(), 1);

  // Same id again: a primary-key conflict.
  Status dup = ins->Run();
  EXPECT_EQ(dup.code(), Code::kAlreadyExists);
  EXPECT_EQ(dup.message(),
            "step 'INSERT INTO t(id, v, n) VALUES(?1, ?2, ?3)': UNIQUE constraint failed: t.id");
  EXPECT_EQ(db.extended_errcode(), SQLITE_CONSTRAINT_PRIMARYKEY);

  ASSERT_TRUE(ins->Bind(1, 2).ok());
  ASSERT_TRUE(ins->Bind(2, nullptr).ok());
  Status not_null = ins->Run();
  EXPECT_EQ(not_null.code(), Code::kFailedPrecondition);
  EXPECT_THAT(not_null.message(), HasSubstr("NOT NULL constraint failed: t.v"));

  ASSERT_TRUE(ins->Bind(2, "y").ok());
  ASSERT_TRUE(ins->Bind(3, -1).ok());
  Status check = ins->Run();
  EXPECT_EQ(check.code(), Code::kFailedPrecondition);
  EXPECT_THAT(check.message(), HasSubstr("CHECK constraint failed"));

  // The statement is usable again after a failure.
  ASSERT_TRUE(ins->Bind(3, 0).ok());
  EXPECT_TRUE(ins->Run().ok());
  EXPECT_EQ(CountRows(db, "t"), 2);

  // A runtime error that only shows when stepping.
  Result<Statement> overflow = db.Prepare("SELECT abs(-9223372036854775807 - 1)");
  ASSERT_TRUE(overflow.ok());
  Result<bool> row = overflow->Step();
  ASSERT_FALSE(row.ok());
  EXPECT_EQ(row.status().message(),
            "step 'SELECT abs(-9223372036854775807 - 1)': integer overflow");
}

TEST(DatabaseTest, BindOutOfRangeIsAnError) {
  Database db = OpenMemory();
  Result<Statement> st = db.Prepare("SELECT ?1");
  ASSERT_TRUE(st.ok());
  EXPECT_EQ(st->BindParameterCount(), 1);
  Status bad = st->Bind(2, 7);
  EXPECT_EQ(bad.code(), Code::kInvalidArgument);
  EXPECT_EQ(bad.message(), "bind parameter 2 of 'SELECT ?1': column index out of range");
}

TEST(DatabaseTest, ValuesRoundTripThroughEveryType) {
  Database db = OpenMemory();
  ASSERT_TRUE(db.Exec("CREATE TABLE v(i INTEGER, d REAL, t TEXT, b BLOB, n)").ok());
  Result<Statement> ins = db.Prepare("INSERT INTO v VALUES(?1, ?2, ?3, ?4, ?5)");
  Result<Statement> sel = db.Prepare("SELECT i, d, t, b, n FROM v WHERE rowid = ?1");
  ASSERT_TRUE(ins.ok() && sel.ok());

  Random rng(42);
  std::vector<int64_t> ints = {0, 1, -1, std::numeric_limits<int64_t>::min(),
                               std::numeric_limits<int64_t>::max()};
  for (int i = 0; i < 500; ++i) {
    int64_t iv = i < static_cast<int>(ints.size()) ? ints[i] : static_cast<int64_t>(rng.Next());
    double dv = (rng.NextDouble() - 0.5) * 1e12;
    std::string tv(rng.Uniform(40), '\0');
    for (char& c : tv) c = static_cast<char>(rng.Uniform(128));  // includes NUL bytes
    std::vector<uint8_t> bv(rng.Uniform(40));
    for (uint8_t& c : bv) c = static_cast<uint8_t>(rng.Uniform(256));

    ASSERT_TRUE(ins->Bind(1, iv).ok());
    ASSERT_TRUE(ins->Bind(2, dv).ok());
    ASSERT_TRUE(ins->Bind(3, std::string_view(tv)).ok());
    ASSERT_TRUE(ins->Bind(4, std::span<const uint8_t>(bv)).ok());
    ASSERT_TRUE(ins->Bind(5, nullptr).ok());
    ASSERT_TRUE(ins->Run().ok());

    ASSERT_TRUE(sel->Bind(1, db.last_insert_rowid()).ok());
    Result<bool> row = sel->Step();
    ASSERT_TRUE(row.ok() && *row);
    EXPECT_EQ(sel->ColumnType(0), ValueType::kInteger);
    EXPECT_EQ(sel->ColumnType(1), ValueType::kFloat);
    EXPECT_EQ(sel->ColumnType(2), ValueType::kText);
    EXPECT_EQ(sel->ColumnType(3), ValueType::kBlob);  // also for an empty blob
    EXPECT_EQ(sel->ColumnType(4), ValueType::kNull);
    EXPECT_EQ(sel->ColumnInt64(0), iv);
    EXPECT_EQ(sel->ColumnDouble(1), dv);
    EXPECT_EQ(sel->ColumnText(2), tv);
    std::span<const uint8_t> blob = sel->ColumnBlob(3);
    EXPECT_EQ(std::vector<uint8_t>(blob.begin(), blob.end()), bv);
    EXPECT_TRUE(sel->ColumnText(4).empty());
    EXPECT_EQ(sel->ColumnName(2), "t");
    Result<bool> done = sel->Step();
    ASSERT_TRUE(done.ok());
    EXPECT_FALSE(*done);
    sel->Reset();
  }
}

TEST(DatabaseTest, ReadonlyDetection) {
  Database db = OpenMemory();
  ASSERT_TRUE(db.Exec("CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT)").ok());
  struct Case {
    const char* sql;
    bool readonly;
  };
  for (const Case& c : std::vector<Case>{
           {"SELECT * FROM t", true},
           {"SELECT count(*) FROM t WHERE id IN (SELECT id FROM t)", true},
           {"WITH x AS (SELECT 1) SELECT * FROM x", true},
           {"INSERT INTO t(v) VALUES('a')", false},
           {"UPDATE t SET v = 'b'", false},
           {"DELETE FROM t", false},
           {"REPLACE INTO t VALUES(1, 'c')", false},
           {"CREATE TABLE u(x)", false},
           {"DROP TABLE t", false},
           {"CREATE INDEX i ON t(v)", false},
       }) {
    Result<Statement> st = db.Prepare(c.sql);
    ASSERT_TRUE(st.ok()) << c.sql << ": " << st.status().ToString();
    EXPECT_EQ(st->readonly(), c.readonly) << c.sql;
    EXPECT_EQ(st->Sql(), c.sql);
  }
}

TEST(DatabaseTest, ExpandedSqlShowsBindings) {
  Database db = OpenMemory();
  Result<Statement> st = db.Prepare("SELECT ?1, ?2, ?3");
  ASSERT_TRUE(st.ok());
  ASSERT_TRUE(st->Bind(1, 5).ok());
  ASSERT_TRUE(st->Bind(2, "it's").ok());
  EXPECT_EQ(st->ExpandedSql(), "SELECT 5, 'it''s', NULL");
  st->ClearBindings();
  EXPECT_EQ(st->ExpandedSql(), "SELECT NULL, NULL, NULL");
}

TEST(DatabaseTest, StatementMayOutliveItsDatabase) {
  Result<Statement> st = Status(Code::kInternal, "unset");
  {
    Database db = OpenMemory();
    st = db.Prepare("SELECT 41 + 1");
    ASSERT_TRUE(st.ok());
  }
  // The connection stays open as long as a statement needs it.
  Result<bool> row = st->Step();
  ASSERT_TRUE(row.ok() && *row);
  EXPECT_EQ(st->ColumnInt64(0), 42);
}

TEST(DatabaseTest, MovedFromObjectsAreEmpty) {
  Database a = OpenMemory();
  Database b = std::move(a);
  EXPECT_EQ(a.handle(), nullptr);  // NOLINT: checking the moved-from state on purpose
  ASSERT_NE(b.handle(), nullptr);
  Result<Statement> st = b.Prepare("SELECT 1");
  ASSERT_TRUE(st.ok());
  Statement s2 = std::move(*st);
  EXPECT_FALSE(static_cast<bool>(*st));  // NOLINT
  EXPECT_TRUE(static_cast<bool>(s2));
}

TEST(DatabaseTest, OpenErrorsNameThePath) {
  TempDir dir;
  Result<Database> missing_dir = Database::Open(dir.File("no/such/dir.db"));
  ASSERT_FALSE(missing_dir.ok());
  EXPECT_EQ(missing_dir.status().code(), Code::kIo);
  EXPECT_EQ(missing_dir.status().message(),
            "open '" + dir.File("no/such/dir.db") + "': unable to open database file");

  OpenOptions no_create;
  no_create.create = false;
  EXPECT_EQ(Database::Open(dir.File("absent.db"), no_create).status().code(), Code::kIo);
  OpenOptions ro;
  ro.read_only = true;
  EXPECT_EQ(Database::Open(dir.File("absent.db"), ro).status().code(), Code::kIo);

  std::string junk = dir.File("junk.db");
  FILE* f = std::fopen(junk.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  std::string garbage(4096, 'x');
  std::fwrite(garbage.data(), 1, garbage.size(), f);
  std::fclose(f);
  Result<Database> not_db = Database::Open(junk);
  ASSERT_FALSE(not_db.ok());
  EXPECT_EQ(not_db.status().code(), Code::kDataLoss);
  EXPECT_THAT(not_db.status().message(), HasSubstr("file is not a database"));

  OpenOptions bad_sync;
  bad_sync.synchronous = "NORMAL; DROP TABLE t";
  Result<Database> bad = Database::Open(dir.File("x.db"), bad_sync);
  EXPECT_EQ(bad.status().code(), Code::kInvalidArgument);
  EXPECT_THAT(bad.status().message(), HasSubstr("synchronous must be"));
}

TEST(DatabaseTest, FileDatabaseUsesWalAndOptions) {
  TempDir dir;
  OpenOptions options;
  options.synchronous = "FULL";
  options.cache_kib = 4096;
  options.mmap_bytes = 1 << 20;
  Result<Database> db = Database::Open(dir.File("w.db"), options);
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  auto pragma = [&](const char* sql) {
    Result<Statement> st = db->Prepare(sql);
    EXPECT_TRUE(st.ok());
    EXPECT_TRUE(*st->Step());
    return std::string(st->ColumnText(0));
  };
  EXPECT_EQ(pragma("PRAGMA journal_mode"), "wal");
  EXPECT_EQ(pragma("PRAGMA synchronous"), "2");  // FULL
  EXPECT_EQ(pragma("PRAGMA cache_size"), "-4096");
  EXPECT_EQ(pragma("PRAGMA mmap_size"), std::to_string(1 << 20));
  EXPECT_EQ(pragma("PRAGMA busy_timeout"), "5000");
}

TEST(DatabaseTest, ReadOnlyConnectionRefusesWrites) {
  TempDir dir;
  std::string path = dir.File("r.db");
  Result<Database> writer = Database::Open(path);
  ASSERT_TRUE(writer.ok());
  ASSERT_TRUE(writer->Exec("CREATE TABLE t(x); INSERT INTO t VALUES(1)").ok());

  OpenOptions ro;
  ro.read_only = true;
  Result<Database> reader = Database::Open(path, ro);
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  EXPECT_TRUE(reader->read_only());
  Status st = reader->Exec("INSERT INTO t VALUES(2)");
  EXPECT_EQ(st.code(), Code::kFailedPrecondition);
  EXPECT_EQ(st.message(), "exec 'INSERT INTO t VALUES(2)': attempt to write a readonly database");
  EXPECT_EQ(CountRows(*reader, "t"), 1);
}

TEST(DatabaseTest, WalReaderSeesOnlyCommittedData) {
  TempDir dir;
  std::string path = dir.File("snap.db");
  Result<Database> writer = Database::Open(path);
  ASSERT_TRUE(writer.ok());
  ASSERT_TRUE(writer->Exec("CREATE TABLE t(x); INSERT INTO t VALUES(1)").ok());
  OpenOptions ro;
  ro.read_only = true;
  Result<Database> reader = Database::Open(path, ro);
  ASSERT_TRUE(reader.ok());

  ASSERT_TRUE(writer->Exec("BEGIN IMMEDIATE; INSERT INTO t VALUES(2)").ok());
  // The reader is not blocked by the open write transaction and does not see it.
  EXPECT_EQ(CountRows(*reader, "t"), 1);
  ASSERT_TRUE(writer->Exec("COMMIT").ok());
  EXPECT_EQ(CountRows(*reader, "t"), 2);
}

}  // namespace
}  // namespace vsc::store
