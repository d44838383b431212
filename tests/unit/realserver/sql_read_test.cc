#include <gtest/gtest.h>

#include <string>

#include "common/random.h"
#include "proto/envelope.h"
#include "realserver/read_response_builder.h"
#include "realserver/sql_reader.h"
#include "store/database.h"
#include "support/temp_dir.h"
#include "support/test_key.h"

namespace vsc::realserver {
namespace {

using test_support::TestKey;

proto::SqlRow RandomRow(Random& rng) {
  proto::SqlRow row;
  for (size_t c = rng.Uniform(6); c > 0; --c) {
    proto::SqlValue* v = row.add_values();
    switch (rng.Uniform(5)) {
      case 0:
        v->set_null(true);
        break;
      case 1:
        v->set_integer(static_cast<int64_t>(rng.Next()));
        break;
      case 2:
        v->set_real(rng.NextDouble());
        break;
      case 3:
        v->set_text(std::string(rng.Uniform(3000), 'x'));
        break;
      default:
        v->set_blob(std::string(rng.Uniform(200), '\0'));
        break;
    }
  }
  return row;
}

// Whatever the rows: the answer fits one datagram once sealed, and it is refused only when the
// whole result would not have fitted.
TEST(ReadResponseBuilderTest, FitsOneDatagramExactlyWhenTheResultDoes) {
  Random rng(17);
  proto::EnvelopeCodec codec(TestKey());
  int refused = 0, answered = 0;
  for (int round = 0; round < 400; ++round) {
    const std::string replica = "rs-" + std::to_string(rng.Uniform(1000));
    const size_t limit = 400 + rng.Uniform(kMaxSqlDatagram);
    ReadResponseBuilder b(rng.Next(), rng.Next(), replica, replica.size(), limit);
    b.SetColumns({"a", "b", "c"});
    const size_t rows = rng.Uniform(60);
    std::vector<proto::SqlRow> kept;
    for (size_t i = 0; i < rows; ++i) {
      proto::SqlRow r = RandomRow(rng);
      kept.push_back(r);
      b.AddRow(std::move(r));
    }
    const bool overflowed = b.overflowed();
    proto::Message m;
    *m.mutable_read_response() = b.Finish();
    const auto sealed = codec.Seal(replica, rng.Next(), m);
    ASSERT_LE(sealed.size(), limit);  // the refusal fits too
    if (overflowed) {
      ++refused;
      EXPECT_FALSE(m.read_response().ok());
      EXPECT_NE(m.read_response().error().find("(" + std::to_string(rows) + " rows)"),
                std::string::npos)
          << m.read_response().error();
      // The complete answer would indeed have been too large.
      proto::Message full = m;
      full.mutable_read_response()->set_ok(true);
      full.mutable_read_response()->clear_error();
      for (const char* c : {"a", "b", "c"}) full.mutable_read_response()->add_columns(c);
      for (const auto& r : kept) *full.mutable_read_response()->add_rows() = r;
      EXPECT_GT(codec.Seal(replica, 1, full).size(), limit);
    } else {
      ++answered;
      EXPECT_TRUE(m.read_response().ok());
      EXPECT_EQ(m.read_response().rows_size(), static_cast<int>(rows));
      EXPECT_LE(sealed.size(), limit);
      EXPECT_EQ(sealed.size(),
                SealedReadResponseSize(replica.size(), m.read_response().ByteSizeLong()));
    }
  }
  EXPECT_GT(refused, 50);  // both outcomes were exercised
  EXPECT_GT(answered, 50);
}

TEST(ReadResponseBuilderTest, StopsCountingAtTheCap) {
  ReadResponseBuilder b(1, 0, "rs", 2, 300, /*count_cap=*/10);
  b.SetColumns({"x"});
  int added = 0;
  proto::SqlRow row;
  row.add_values()->set_text(std::string(100, 'y'));
  while (b.AddRow(row)) ++added;
  EXPECT_EQ(b.rows_seen(), 10u);
  EXPECT_EQ(b.Finish().error(),
            "result too large for one datagram (at least 10 rows); narrow the query or use LIMIT");
}

TEST(ReadResponseBuilderTest, CutsLongErrorsOnACharacterBoundary) {
  std::string e(3000, 'a');
  for (size_t i = 0; i < e.size(); i += 3) e.replace(i, 2, "é");  // 2-byte characters
  auto r = ReadResponseBuilder::Error(1, 2, "rs", e);
  EXPECT_TRUE(IsValidUtf8(r.error()));
  EXPECT_LT(r.error().size(), 2100u);
}

TEST(Utf8Test, AcceptsUtf8AndRefusesTheRest) {
  EXPECT_TRUE(IsValidUtf8(""));
  EXPECT_TRUE(IsValidUtf8("plain"));
  EXPECT_TRUE(IsValidUtf8("h\xc3\xa9 \xe6\x97\xa5 \xf0\x9f\x98\x80"));
  for (const char* bad :
       {"\xff", "\xc3", "\xc0\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80", "a\x80"}) {
    EXPECT_FALSE(IsValidUtf8(bad)) << bad;
  }
}

class SqlReaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = dir_.File("r.db");
    auto db = store::Database::Open(path_);
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE(
        db->Exec("CREATE TABLE resources(id INTEGER PRIMARY KEY, node TEXT NOT NULL, "
                 "size INTEGER, updated_at INTEGER);"
                 "CREATE TABLE _vsc_replica(id INTEGER PRIMARY KEY CHECK (id = 0), epoch, "
                 "applied_seq, digest BLOB);"
                 "INSERT INTO _vsc_replica VALUES(0, 1, 7, zeroblob(32));"
                 "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 5000) "
                 "INSERT INTO resources SELECT i, 'node-' || (i % 64), i * 10, 0 FROM n;"
                 "INSERT INTO resources VALUES(9999, CAST(x'ff41' AS TEXT), NULL, 1.5);")
            .ok());
    auto r = SqlReader::Open(path_);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    reader_.emplace(std::move(r).value());
  }

  proto::ReadResponse Run(const std::string& sql, uint64_t min_seq = 0,
                          std::vector<proto::SqlValue> params = {}) {
    proto::ReadRequest req;
    req.set_request_id(42);
    req.mutable_statement()->set_sql(sql);
    for (auto& p : params) *req.mutable_statement()->add_params() = p;
    req.set_min_seq(min_seq);
    return reader_->Run(req, "rs1", 3);
  }

  test_support::TempDir dir_;
  std::string path_;
  std::optional<SqlReader> reader_;
};

TEST_F(SqlReaderTest, AnswersSelectsWithColumnsRowsAndPosition) {
  proto::SqlValue id;
  id.set_integer(3);
  auto r =
      Run("SELECT id, node, size, NULL AS n, 0.5 AS half FROM resources WHERE id = ?1", 7, {id});
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(r.request_id(), 42u);
  EXPECT_EQ(r.applied_seq(), 7u);
  EXPECT_EQ(r.replica_id(), "rs1");
  ASSERT_EQ(r.columns_size(), 5);
  EXPECT_EQ(r.columns(1), "node");
  ASSERT_EQ(r.rows_size(), 1);
  EXPECT_EQ(r.rows(0).values(0).integer(), 3);
  EXPECT_EQ(r.rows(0).values(1).text(), "node-3");
  EXPECT_EQ(r.rows(0).values(2).integer(), 30);
  EXPECT_TRUE(r.rows(0).values(3).has_null());
  EXPECT_EQ(r.rows(0).values(4).real(), 0.5);
  // TEXT that is not UTF-8 travels as a blob, so the answer still parses.
  r = Run("SELECT node FROM resources WHERE id = 9999");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.rows(0).values(0).blob(),
            "\xff"
            "A");
}

TEST_F(SqlReaderTest, RefusesReadsAheadOfTheReplica) {
  auto r = Run("SELECT 1", 8);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.applied_seq(), 7u);
  EXPECT_NE(r.error().find("not yet applied: at seq 7, need 8"), std::string::npos) << r.error();
}

TEST_F(SqlReaderTest, RefusesWhatIsNotAReadWithAClearMessage) {
  struct Case {
    const char* sql;
    const char* says;
  } cases[] = {
      {"DELETE FROM resources", "it can change the database"},
      {"INSERT INTO resources VALUES(1, 'x', 1, 1)", "it can change the database"},
      {"BEGIN", "not a query"},
      {"SELECT 1; SELECT 2", "sql error"},
      {"SELEC 1", "sql error"},
      {"SELECT nope FROM resources", "no such column"},
      {"SELECT ?1", "1 parameter(s) but 0 value(s)"},
      {"SELECT * FROM resources", "result too large for one datagram (5001 rows)"},
  };
  for (const auto& c : cases) {
    auto r = Run(c.sql);
    EXPECT_FALSE(r.ok()) << c.sql;
    EXPECT_NE(r.error().find(c.says), std::string::npos) << c.sql << " -> " << r.error();
  }
  // The connection is still usable after every refusal.
  EXPECT_EQ(Run("SELECT count(*) FROM resources").rows(0).values(0).integer(), 5001);
}

TEST_F(SqlReaderTest, InterruptsQueriesPastTheStepBudget) {
  SqlReaderOptions o;
  o.max_vm_steps = 100'000;
  auto r = SqlReader::Open(path_, o);
  ASSERT_TRUE(r.ok());
  proto::ReadRequest req;
  req.mutable_statement()->set_sql("SELECT count(*) FROM resources a, resources b");
  auto answer = r->Run(req, "rs1", 3);
  EXPECT_FALSE(answer.ok());
  EXPECT_NE(answer.error().find("read budget"), std::string::npos) << answer.error();
  req.mutable_statement()->set_sql("SELECT count(*) FROM resources");
  EXPECT_TRUE(r->Run(req, "rs1", 3).ok());  // the budget is per request
}

}  // namespace
}  // namespace vsc::realserver
