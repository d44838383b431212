#include "replication/mirror.h"

#include <gtest/gtest.h>

#include "store/database.h"
#include "support/temp_dir.h"

namespace vsc::replication {
namespace {

class MirrorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto m = SchemaMirror::Create();
    ASSERT_TRUE(m.ok()) << m.status().ToString();
    mirror_ = std::move(*m);
    ASSERT_TRUE(mirror_
                    ->LoadSchema({"CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT UNIQUE, "
                                  "at TEXT DEFAULT CURRENT_TIMESTAMP)"})
                    .ok());
  }
  std::string Refusal(const std::string& sql, std::vector<Value> params = {}) {
    auto r = mirror_->Check(Statement{sql, std::move(params)});
    if (r.ok()) return "accepted";
    EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
    return r.status().message();
  }
  std::unique_ptr<SchemaMirror> mirror_;
};

TEST_F(MirrorTest, ClassifiesReadsWritesAndDdl) {
  EXPECT_EQ(*mirror_->Check({"SELECT * FROM t", {}}), StatementKind::kRead);
  EXPECT_EQ(*mirror_->Check({"EXPLAIN INSERT INTO t(name) VALUES('a')", {}}), StatementKind::kRead);
  EXPECT_EQ(*mirror_->Check({"INSERT INTO t(name) VALUES(?1)", {Value::Text("a")}}),
            StatementKind::kWrite);
  EXPECT_EQ(*mirror_->Check({"UPDATE t SET name = hex(randomblob(4)), at = datetime('now')", {}}),
            StatementKind::kWrite);
  EXPECT_EQ(*mirror_->Check({"DELETE FROM t WHERE abs(random()) % 10 = 0;  -- done\n", {}}),
            StatementKind::kWrite);
  EXPECT_EQ(*mirror_->Check({"CREATE TABLE u(x)", {}}), StatementKind::kDdl);
  EXPECT_EQ(*mirror_->Check({"CREATE INDEX t_at ON t(at)", {}}), StatementKind::kDdl);
  EXPECT_EQ(*mirror_->Check({"ALTER TABLE t ADD COLUMN y INTEGER", {}}), StatementKind::kDdl);
  EXPECT_EQ(*mirror_->Check({"DROP TABLE t", {}}), StatementKind::kDdl);
  EXPECT_EQ(*mirror_->Check({"CREATE VIEW v AS SELECT name FROM t", {}}), StatementKind::kDdl);
  EXPECT_EQ(*mirror_->Check({"CREATE TRIGGER tr AFTER INSERT ON t BEGIN "
                             "UPDATE t SET at = CURRENT_TIMESTAMP WHERE id = new.id; END",
                             {}}),
            StatementKind::kDdl);
  // A read with a nondeterministic function is a read; the caller refuses it on the write port.
  EXPECT_EQ(*mirror_->Check({"SELECT changes()", {}}), StatementKind::kRead);
}

TEST_F(MirrorTest, RefusesEachCategoryWithItsMessage) {
  EXPECT_EQ(Refusal("INSERT INTO nope VALUES(1)"), "statement refused: no such table: nope");
  EXPECT_EQ(Refusal("INSERT INTO t(nope) VALUES(1)"),
            "statement refused: table t has no column named nope");
  EXPECT_EQ(Refusal("INSRT INTO t VALUES(1)"), "statement refused: near \"INSRT\": syntax error");
  EXPECT_EQ(Refusal("  -- nothing\n"),
            "statement refused: empty statement; send one SQL statement");
  EXPECT_EQ(Refusal("INSERT INTO t(name) VALUES('a'); DELETE FROM t"),
            "statement refused: more than one statement in request; send one statement per "
            "request (several statements that must apply together go in one batch)");
  EXPECT_EQ(Refusal("INSERT INTO t(id, name) VALUES(?1, ?2)", {Value::Int(1)}),
            "statement refused: statement has 2 parameters but 1 value was bound; bind exactly "
            "one value per parameter (?1..?N in order)");
  EXPECT_EQ(Refusal("DELETE FROM t WHERE id = ?", {Value::Int(1), Value::Int(2)}),
            "statement refused: statement has 1 parameter but 2 values were bound; bind exactly "
            "one value per parameter (?1..?N in order)");
  const std::string txn =
      "statement refused: transaction control (BEGIN, COMMIT, ROLLBACK, SAVEPOINT, RELEASE) is "
      "not accepted on the write port; every write runs in its own transaction on the replicas; "
      "send statements that must apply together as one batch";
  for (const char* sql : {"BEGIN", "BEGIN IMMEDIATE", "COMMIT", "END", "ROLLBACK", "SAVEPOINT a",
                          "RELEASE a", "ROLLBACK TO a"}) {
    EXPECT_EQ(Refusal(sql), txn) << sql;
  }
  const std::string attach =
      "statement refused: ATTACH and DETACH are not accepted on the write port; each replica "
      "holds exactly one database";
  EXPECT_EQ(Refusal("ATTACH 'x.db' AS x"), attach);
  EXPECT_EQ(Refusal("DETACH x"), attach);
  EXPECT_EQ(Refusal("PRAGMA journal_mode=DELETE"),
            "statement refused: PRAGMA is not accepted on the write port; replica settings are "
            "managed by the cluster, and read-only pragmas go to the read port");
  EXPECT_EQ(Refusal("PRAGMA table_info(t)").substr(0, 28), "statement refused: PRAGMA is");
  EXPECT_EQ(Refusal("/* c */ vacuum").substr(0, 28), "statement refused: VACUUM is");
  EXPECT_EQ(Refusal("CREATE TEMP TABLE x(a)").substr(0, 41),
            "statement refused: temporary tables, view");
  EXPECT_EQ(Refusal("CREATE VIRTUAL TABLE x USING fts5(a)").substr(0, 33),
            "statement refused: virtual tables");
  for (const char* sql : {"INSERT INTO t(name) VALUES('a') RETURNING id",
                          "UPDATE t SET name = 'b' RETURNING *", "DELETE FROM t RETURNING name"}) {
    EXPECT_EQ(Refusal(sql).rfind("statement refused: RETURNING is not supported: the ", 0), 0u)
        << sql << ": " << Refusal(sql);
  }
  EXPECT_EQ(Refusal("CREATE TABLE _vsc_mine(a)"),
            "statement refused: '_vsc_mine': names starting with _vsc_ are reserved for the "
            "cluster's own state; choose another name");
}

TEST_F(MirrorTest, RefusesConnectionDependentFunctionsInWrites) {
  for (const char* f : {"last_insert_rowid()", "changes()", "total_changes()", "sqlite_version()",
                        "sqlite_source_id()", "sqlite_compileoption_used('THREADSAFE')",
                        "sqlite_compileoption_get(0)"}) {
    const std::string fn(f, std::string_view(f).find('('));
    const std::string sql = std::string("UPDATE t SET name = ") + f;
    EXPECT_EQ(Refusal(sql), "statement refused: function " + fn +
                                "() depends on the connection, the SQLite build or the file "
                                "layout rather than on the data, so replicas would store "
                                "different values; compute the value in the statement (e.g. a "
                                "subquery on the key) or pass it as a parameter")
        << sql;
  }
  // Debian's build has no sqlite_offset(); where it exists the authorizer refuses it as above.
  EXPECT_NE(Refusal("UPDATE t SET name = sqlite_offset(id)"), "accepted");
  // Inside a subquery, a trigger body, or a column default.
  EXPECT_NE(Refusal("INSERT INTO t(name) SELECT changes() FROM t"), "accepted");
  EXPECT_NE(Refusal("CREATE TABLE d(a DEFAULT (last_insert_rowid()))"), "accepted");
  EXPECT_NE(Refusal("CREATE TRIGGER tr AFTER INSERT ON t BEGIN "
                    "UPDATE t SET name = total_changes(); END"),
            "accepted");
  ASSERT_TRUE(mirror_->ApplyDdl({"CREATE TABLE log(n INTEGER)", {}}).ok());
  ASSERT_TRUE(mirror_
                  ->ApplyDdl({"CREATE TRIGGER tr AFTER INSERT ON t BEGIN "
                              "INSERT INTO log VALUES (1); END",
                              {}})
                  .ok());
  EXPECT_EQ(Refusal("INSERT INTO t(name) VALUES('x')"), "accepted");
  EXPECT_EQ(Refusal("INSERT INTO t(name) VALUES(datetime('now', 'localtime'))"),
            "statement refused: the 'localtime' date/time modifier depends on each replica's "
            "time zone; store UTC and convert when reading");
  EXPECT_NE(Refusal("INSERT INTO t(name) VALUES(datetime('now', ?1))", {Value::Text("UTC")}),
            "accepted");
  EXPECT_EQ(Refusal("INSERT INTO t(name) VALUES(datetime('now', '+1 day'))"), "accepted");
}

TEST_F(MirrorTest, DdlIsSeenOnlyOnceApplied) {
  EXPECT_EQ(Refusal("INSERT INTO u(x) VALUES(1)"), "statement refused: no such table: u");
  ASSERT_TRUE(mirror_->ApplyDdl({"CREATE TABLE u(x)", {}}).ok());
  EXPECT_EQ(Refusal("INSERT INTO u(x) VALUES(1)"), "accepted");
  EXPECT_FALSE(mirror_->ApplyDdl({"CREATE TABLE u(x)", {}}).ok());
  ASSERT_TRUE(mirror_->ApplyDdl({"ALTER TABLE u ADD COLUMN y", {}}).ok());
  EXPECT_EQ(Refusal("INSERT INTO u(x, y) VALUES(1, 2)"), "accepted");
}

TEST_F(MirrorTest, BatchSeesItsOwnDdlAndLeavesTheMirrorUnchanged) {
  auto kinds = mirror_->CheckBatch(
      {{"CREATE TABLE w(a)", {}}, {"INSERT INTO w VALUES(?1)", {Value::Int(1)}}});
  ASSERT_TRUE(kinds.ok()) << kinds.status().ToString();
  EXPECT_EQ(*kinds, (std::vector<StatementKind>{StatementKind::kDdl, StatementKind::kWrite}));
  EXPECT_EQ(Refusal("INSERT INTO w VALUES(1)"), "statement refused: no such table: w");
  auto bad = mirror_->CheckBatch({{"INSERT INTO t(name) VALUES('a')", {}}, {"COMMIT", {}}});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message().substr(0, 32), "statement 2: statement refused: ");
}

// A write checked once is remembered by its SQL text; what it remembers must never outlive the
// schema it was checked against, nor excuse the values of a later request.
TEST_F(MirrorTest, ARememberedWriteIsCheckedAgainAfterTheSchemaChanges) {
  const std::string insert = "INSERT INTO u(x, y) VALUES(?1, ?2)";
  ASSERT_TRUE(mirror_->ApplyDdl({"CREATE TABLE u(x, y)", {}}).ok());
  EXPECT_EQ(Refusal(insert, {Value::Int(1), Value::Int(2)}), "accepted");
  EXPECT_EQ(Refusal(insert, {Value::Int(1)}),
            "statement refused: statement has 2 parameters but 1 value was bound; bind exactly "
            "one value per parameter (?1..?N in order)");
  EXPECT_EQ(Refusal(insert, {Value::Int(1), Value::Text("localtime")}).substr(0, 40),
            "statement refused: the 'localtime' date/");
  // Inside a batch, the batch's own DDL decides, not what was remembered before it.
  auto batch =
      mirror_->CheckBatch({{"DROP TABLE u", {}}, {insert, {Value::Int(1), Value::Int(2)}}});
  ASSERT_FALSE(batch.ok());
  EXPECT_EQ(batch.status().message(), "statement 2: statement refused: no such table: u");
  EXPECT_EQ(Refusal(insert, {Value::Int(1), Value::Int(2)}), "accepted");  // rolled back
  ASSERT_TRUE(mirror_->ApplyDdl({"DROP TABLE u", {}}).ok());
  EXPECT_EQ(Refusal(insert, {Value::Int(1), Value::Int(2)}), "statement refused: no such table: u");
}

TEST(MirrorSchemaTest, ReadSchemaSkipsInternalObjectsAndPutsTablesFirst) {
  test_support::TempDir dir;
  const std::string path = dir.File("db.sqlite");
  {
    auto db = store::Database::Open(path);
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE(
        db->Exec("CREATE TABLE a(id INTEGER PRIMARY KEY AUTOINCREMENT, v UNIQUE);"
                 "CREATE INDEX a_v ON a(v);"
                 "CREATE VIEW av AS SELECT v FROM a;"
                 "CREATE TABLE b(x);"
                 "CREATE TABLE _vsc_replica(id INTEGER PRIMARY KEY);"
                 "CREATE INDEX _vsc_i ON b(x);"
                 "CREATE TRIGGER bt AFTER INSERT ON b BEGIN INSERT INTO a(v) VALUES(1); END")
            .ok());
  }
  auto schema = SchemaMirror::ReadSchema(path);
  ASSERT_TRUE(schema.ok()) << schema.status().ToString();
  ASSERT_EQ(schema->size(), 5u);
  EXPECT_EQ((*schema)[0].substr(0, 14), "CREATE TABLE a");
  EXPECT_EQ((*schema)[1], "CREATE TABLE b(x)");
  EXPECT_EQ((*schema)[2], "CREATE INDEX a_v ON a(v)");
  EXPECT_EQ((*schema)[3].substr(0, 14), "CREATE VIEW av");
  EXPECT_EQ((*schema)[4].substr(0, 17), "CREATE TRIGGER bt");
  auto mirror = SchemaMirror::Create();
  ASSERT_TRUE(mirror.ok());
  ASSERT_TRUE((*mirror)->LoadSchema(*schema).ok());
  EXPECT_EQ(*(*mirror)->Check({"INSERT INTO b VALUES(1)", {}}), StatementKind::kWrite);
  EXPECT_FALSE(SchemaMirror::ReadSchema(dir.File("missing.db")).ok());
}

}  // namespace
}  // namespace vsc::replication
