// Idempotency keys on the replicas (issue 11): idempotency.h and the executor's key table.
#include "replication/idempotency.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "replica_fixtures.h"
#include "replication/applier.h"
#include "replication/log.h"
#include "replication/replica_store.h"
#include "store/database.h"
#include "support/temp_dir.h"

namespace vsc::replication {
namespace {

using test_support::TempDir;

using testing_util::OpenReplica;

Entry Keyed(uint64_t seq, std::string sql, std::string key, uint64_t window = 1000) {
  Entry e;
  e.epoch = 1;
  e.seq = seq;
  e.ts_micros = 1'600'000'000'000'000 + static_cast<int64_t>(seq);
  e.statements.push_back({std::move(sql), {}});
  e.idempotency_key = std::move(key);
  e.idempotency_window = e.idempotency_key.empty() ? 0 : window;
  return e;
}

int64_t Scalar(const std::string& path, const std::string& sql) {
  store::OpenOptions o;
  o.read_only = true;
  o.synchronous.clear();
  auto db = store::Database::Open(path, o);
  EXPECT_TRUE(db.ok()) << db.status().ToString();
  auto st = db->Prepare(sql);
  EXPECT_TRUE(st.ok()) << st.status().ToString();
  EXPECT_TRUE(*st->Step());
  return st->ColumnInt64(0);
}

std::vector<std::string> Keys(const std::string& path) {
  store::OpenOptions o;
  o.read_only = true;
  o.synchronous.clear();
  auto db = store::Database::Open(path, o);
  auto st = db->Prepare("SELECT key || '@' || seq FROM _vsc_idempotency ORDER BY key");
  std::vector<std::string> out;
  while (*st->Step()) out.emplace_back(st->ColumnText(0));
  return out;
}

Entry CreateTable() {
  Entry e = Keyed(1, "CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT UNIQUE)", "");
  return e;
}

TEST(IdempotencyKeyTest, ValidKeysPassAndBadOnesSayWhy) {
  EXPECT_TRUE(ValidateIdempotencyKey("order-42/retry:1 ~ok").ok());
  EXPECT_TRUE(ValidateIdempotencyKey(std::string(kMaxIdempotencyKeyBytes, 'k')).ok());
  Status empty = ValidateIdempotencyKey("");
  EXPECT_FALSE(empty.ok());
  EXPECT_NE(empty.message().find("empty"), std::string::npos);
  Status longer = ValidateIdempotencyKey(std::string(kMaxIdempotencyKeyBytes + 1, 'k'));
  EXPECT_NE(longer.message().find("over the limit of 128"), std::string::npos);
  Status control = ValidateIdempotencyKey("a\nb");
  EXPECT_NE(control.message().find("byte 2 is not printable ASCII"), std::string::npos);
  EXPECT_FALSE(ValidateIdempotencyKey("caf\xc3\xa9").ok());
}

TEST(IdempotencyKeyTest, WindowCountsSeqs) {
  EXPECT_TRUE(WithinWindow(1, 10, 10));
  EXPECT_FALSE(WithinWindow(1, 11, 10));
  EXPECT_TRUE(WithinWindow(2, 11, 10));
  EXPECT_EQ(OldestRemembered(5, 10), 0u);
  EXPECT_EQ(OldestRemembered(11, 10), 2u);
}

TEST(IdempotencyTableTest, AKeyedWriteAppliedTwiceAppliesOnceAndReportsTheOriginal) {
  TempDir dir;
  const std::string path = dir.path() + "/r.db";
  auto a = OpenReplica(path);
  ASSERT_TRUE(a->Apply(std::vector<Entry>{CreateTable()}).ok());
  auto first = a->Apply(std::vector<Entry>{Keyed(2, "INSERT INTO t(v) VALUES('x')", "k1")});
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ((*first)[0].code, 0);
  EXPECT_EQ((*first)[0].duplicate_of, 0u);
  // The retry, sequenced again (later seq, a fresh statement that would insert another row).
  auto again = a->Apply(std::vector<Entry>{Keyed(3, "INSERT INTO t(v) VALUES('y')", "k1")});
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ((*again)[0].seq, 3u);
  EXPECT_EQ((*again)[0].duplicate_of, 2u);
  EXPECT_EQ((*again)[0].code, 0);
  EXPECT_EQ((*again)[0].rows_changed, 1);
  ASSERT_EQ((*again)[0].statements.size(), 1u);
  EXPECT_EQ((*again)[0].statements[0], (*first)[0].statements[0]);  // the original's rowid
  EXPECT_EQ(Scalar(path, "SELECT count(*) FROM t"), 1);
  // Another key is applied.
  auto other = a->Apply(std::vector<Entry>{Keyed(4, "INSERT INTO t(v) VALUES('z')", "k2")});
  ASSERT_TRUE(other.ok());
  EXPECT_EQ((*other)[0].duplicate_of, 0u);
  EXPECT_EQ(Scalar(path, "SELECT count(*) FROM t"), 2);
}

TEST(IdempotencyTableTest, AFailedKeyedWriteIsRememberedWithItsFailureAcrossARestart) {
  TempDir dir;
  const std::string path = dir.path() + "/r.db";
  {
    auto a = OpenReplica(path);
    ASSERT_TRUE(
        a->Apply(std::vector<Entry>{CreateTable(), Keyed(2, "INSERT INTO t(v) VALUES('x')", "")})
            .ok());
    auto failed = a->Apply(std::vector<Entry>{Keyed(3, "INSERT INTO t(v) VALUES('x')", "dup")});
    ASSERT_TRUE(failed.ok());
    EXPECT_NE((*failed)[0].code, 0);
  }
  auto a = OpenReplica(path);
  ASSERT_TRUE(a->Apply(std::vector<Entry>{Keyed(4, "DELETE FROM t", "")}).ok());
  // Would succeed now; the key says it was applied (and failed) at seq 3.
  auto retry = a->Apply(std::vector<Entry>{Keyed(5, "INSERT INTO t(v) VALUES('x')", "dup")});
  ASSERT_TRUE(retry.ok());
  EXPECT_EQ((*retry)[0].duplicate_of, 3u);
  EXPECT_NE((*retry)[0].code, 0);
  EXPECT_EQ((*retry)[0].failed_statement, 1u);
  EXPECT_EQ(Scalar(path, "SELECT count(*) FROM t"), 0);
}

TEST(IdempotencyTableTest, TheSameKeyTwiceInOneBatchAppliesOnce) {
  TempDir dir;
  const std::string path = dir.path() + "/r.db";
  auto a = OpenReplica(path);
  auto r = a->Apply(std::vector<Entry>{CreateTable(), Keyed(2, "INSERT INTO t(v) VALUES('a')", "k"),
                                       Keyed(3, "INSERT INTO t(v) VALUES('b')", "k")});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ((*r)[2].duplicate_of, 2u);
  EXPECT_EQ(Scalar(path, "SELECT count(*) FROM t"), 1);
}

TEST(IdempotencyTableTest, AKeyRolledBackWithItsTransactionIsRecordedAfterTheRedo) {
  TempDir dir;
  const std::string path = dir.path() + "/r.db";
  auto a = OpenReplica(path);
  // The second entry ends the whole transaction (ON CONFLICT ROLLBACK): the executor redoes the
  // first; both keys must still be recorded.
  auto r =
      a->Apply(std::vector<Entry>{CreateTable(), Keyed(2, "INSERT INTO t(v) VALUES('a')", "first"),
                                  Keyed(3, "INSERT OR ROLLBACK INTO t(v) VALUES('a')", "second")});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_NE((*r)[2].code, 0);
  EXPECT_EQ(Keys(path), (std::vector<std::string>{"first@2", "second@3"}));
}

TEST(IdempotencyTableTest, TheWindowPrunesIdenticallyOnTwoReplicas) {
  TempDir dir;
  const std::string p1 = dir.path() + "/a.db", p2 = dir.path() + "/b.db";
  auto a = OpenReplica(p1);
  auto b = OpenReplica(p2);
  std::vector<Entry> entries{CreateTable()};
  for (uint64_t seq = 2; seq <= 12; ++seq) {
    entries.push_back(Keyed(seq, "INSERT INTO t(v) VALUES('" + std::to_string(seq) + "')",
                            "k" + std::to_string(seq), /*window=*/4));
  }
  // Applied in different batches: the tables and digests still agree.
  ASSERT_TRUE(a->Apply(entries).ok());
  for (const Entry& e : entries) ASSERT_TRUE(b->Apply(std::vector<Entry>{e}).ok());
  const std::vector<std::string> want{"k10@10", "k11@11", "k12@12", "k9@9"};
  EXPECT_EQ(Keys(p1), want);
  EXPECT_EQ(Keys(p2), want);
  EXPECT_EQ(a->state().digest, b->state().digest);
  // A retry of a key outside the window is applied again, on both.
  const Entry late = Keyed(13, "INSERT INTO t(v) VALUES('late')", "k2", 4);
  auto ra = a->Apply(std::vector<Entry>{late});
  auto rb = b->Apply(std::vector<Entry>{late});
  ASSERT_TRUE(ra.ok() && rb.ok());
  EXPECT_EQ((*ra)[0].duplicate_of, 0u);
  EXPECT_EQ(*ra, *rb);
  EXPECT_EQ(Scalar(p1, "SELECT count(*) FROM t"), 12);
  EXPECT_EQ(a->state().digest, b->state().digest);
  auto sum_a = Checksum(p1);
  auto sum_b = Checksum(p2);
  ASSERT_TRUE(sum_a.ok() && sum_b.ok());
  EXPECT_EQ(*sum_a, *sum_b);
}

TEST(IdempotencyLogTest, KeysAreKeptAndALogFileFromBeforeThemOpens) {
  TempDir dir;
  const std::string path = dir.path() + "/log.db";
  {
    auto log = ReplicationLog::Open(path, {});
    ASSERT_TRUE(log.ok());
    ASSERT_TRUE((*log)->Append(std::vector<Entry>{Keyed(1, "INSERT INTO t VALUES(1)", "")}).ok());
  }
  {
    // Make it a file from before the key columns.
    auto db = store::Database::Open(path, {});
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE(db->Exec("ALTER TABLE entries DROP COLUMN idem_key;"
                         "ALTER TABLE entries DROP COLUMN idem_window;")
                    .ok());
  }
  auto log = ReplicationLog::Open(path, {});
  ASSERT_TRUE(log.ok()) << log.status().ToString();
  const Entry keyed = Keyed(2, "INSERT INTO t VALUES(2)", "key-2", 77);
  ASSERT_TRUE((*log)->Append(std::vector<Entry>{keyed}).ok());
  auto read = (*log)->Read(1, 10, 1 << 20);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  ASSERT_EQ(read->size(), 2u);
  EXPECT_EQ((*read)[0].idempotency_key, "");
  EXPECT_EQ((*read)[1], keyed);
}

}  // namespace
}  // namespace vsc::replication
