#include "replication/replica_store.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "common/random.h"
#include "replica_fixtures.h"
#include "replication/applier.h"
#include "replication/digest.h"
#include "replication/replica_vfs.h"
#include "store/database.h"
#include "support/temp_dir.h"
#include "support/wait_until.h"

namespace vsc::replication {
namespace {

using test_support::TempDir;

constexpr int64_t kTs = 1'600'000'000'000'000;  // 2020-09-13 12:26:40 UTC

using testing_util::OpenReplica;

Entry Write(uint64_t seq, std::vector<Statement> statements, int64_t ts = 0) {
  Entry e;
  e.epoch = 1;
  e.seq = seq;
  e.ts_micros = ts == 0 ? kTs + static_cast<int64_t>(seq) * 1'000'000 : ts;
  e.statements = std::move(statements);
  return e;
}

std::vector<std::vector<Value>> Rows(const std::string& path, const std::string& sql) {
  store::OpenOptions o;
  o.read_only = true;
  o.synchronous.clear();
  auto db = store::Database::Open(path, o);
  EXPECT_TRUE(db.ok()) << db.status().ToString();
  auto st = db->Prepare(sql);
  EXPECT_TRUE(st.ok()) << st.status().ToString();
  std::vector<std::vector<Value>> out;
  while (*st->Step()) {
    std::vector<Value> row;
    for (int c = 0; c < st->ColumnCount(); ++c) {
      switch (st->ColumnType(c)) {
        case store::ValueType::kInteger:
          row.push_back(Value::Int(st->ColumnInt64(c)));
          break;
        case store::ValueType::kFloat:
          row.push_back(Value::Real(st->ColumnDouble(c)));
          break;
        case store::ValueType::kText:
          row.push_back(Value::Text(std::string(st->ColumnText(c))));
          break;
        case store::ValueType::kBlob: {
          auto b = st->ColumnBlob(c);
          row.push_back(Value::Blob(std::string(b.begin(), b.end())));
          break;
        }
        case store::ValueType::kNull:
          row.push_back(Value::Null());
          break;
      }
    }
    out.push_back(std::move(row));
  }
  return out;
}

TEST(ReplicaVfsTest, JulianDayMillis) {
  EXPECT_EQ(JulianDayMillis(0), 210866760000000LL);
  EXPECT_EQ(JulianDayMillis(1999), 210866760000001LL);
  EXPECT_EQ(JulianDayMillis(-1), 210866759999999LL);
}

// The determinism the design relies on: 'now' in every form, column defaults, random(),
// randomblob(8) and abs(random()) % 10 are identical on two independent replica files applying
// the same entries at different wall times, and 'now' is the entry's timestamp.
TEST(SqliteExecutorTest, NondeterministicSqlIsDeterministicOnEveryReplica) {
  TempDir dir;
  std::vector<Entry> entries = {
      Write(1, {{"CREATE TABLE t(id INTEGER PRIMARY KEY, a, b, c, "
                 "at TEXT DEFAULT CURRENT_TIMESTAMP, d TEXT DEFAULT (datetime('now')), "
                 "r INTEGER DEFAULT (random()), e, f)",
                 {}}}),
      Write(2, {{"INSERT INTO t(a, b, c) VALUES(datetime('now'), CURRENT_TIMESTAMP, CURRENT_DATE)",
                 {}}}),
      Write(3,
            {{"INSERT INTO t(a, b, c) VALUES(random(), randomblob(8), abs(random()) % 10)", {}},
             {"INSERT INTO t(a, b, c) VALUES(random(), randomblob(8), abs(random()) % 10)", {}}}),
      Write(4, {{"UPDATE t SET e = unixepoch('now'), f = strftime('%s','now')", {}}}),
      Write(5, {{"INSERT INTO t(a) SELECT random() FROM t", {}}}),
  };
  const std::string a = dir.File("a.db"), b = dir.File("b.db");
  auto ra = OpenReplica(a);
  ASSERT_TRUE(ra->Apply(entries).ok());
  auto rb = OpenReplica(b, "NORMAL");
  for (const Entry& e : entries) {  // one entry per transaction on this one
    auto res = rb->Apply(std::span<const Entry>(&e, 1));
    ASSERT_TRUE(res.ok()) << res.status().ToString();
    ASSERT_EQ((*res)[0].code, 0) << (*res)[0].error;
  }
  const std::string q = "SELECT * FROM t ORDER BY id";
  const auto rows = Rows(a, q);
  ASSERT_EQ(rows.size(), 6u);
  EXPECT_EQ(rows, Rows(b, q));
  EXPECT_EQ(rows[0][1], Value::Text("2020-09-13 12:26:42"));  // datetime('now') of seq 2
  EXPECT_EQ(rows[0][2], Value::Text("2020-09-13 12:26:42"));
  EXPECT_EQ(rows[0][4], Value::Text("2020-09-13 12:26:42"));  // DEFAULT CURRENT_TIMESTAMP
  EXPECT_EQ(rows[0][5], Value::Text("2020-09-13 12:26:42"));
  EXPECT_EQ(rows[0][3], Value::Text("2020-09-13"));  // CURRENT_DATE
  for (size_t i = 0; i < 3; ++i) {                   // 'now' of seq 4 on every row it updated
    EXPECT_EQ(rows[i][7], Value::Int(1'600'000'004));
    EXPECT_EQ(rows[i][8], Value::Text("1600000004"));
  }
  EXPECT_EQ(rows[3][7], Value::Null());  // inserted by seq 5, after the update
  // Random values differ from one call to the next, also within one entry.
  EXPECT_NE(rows[1][1], rows[2][1]);
  EXPECT_NE(rows[1][6], rows[2][6]);
  EXPECT_NE(rows[3][1], rows[4][1]);
  EXPECT_EQ(ra->state().digest, rb->state().digest);
  auto ca = Checksum(a), cb = Checksum(b);
  ASSERT_TRUE(ca.ok()) << ca.status().ToString();
  EXPECT_EQ(*ca, *cb);
  EXPECT_EQ(ca->size(), 64u);
  // randomblob(8) is 8 bytes, abs(random()) % 10 a digit, random() an integer.
  const auto shapes = Rows(a,
                           "SELECT typeof(a), typeof(b), length(b), c BETWEEN 0 AND 9 "
                           "FROM t WHERE id IN (2, 3)");
  for (const auto& r : shapes) {
    EXPECT_EQ(r, (std::vector<Value>{Value::Text("integer"), Value::Text("blob"), Value::Int(8),
                                     Value::Int(1)}));
  }
}

TEST(SqliteExecutorTest, RandomValuesDependOnEpochAndSeq) {
  TempDir dir;
  auto r1 = OpenReplica(dir.File("1.db"));
  auto r2 = OpenReplica(dir.File("2.db"));
  std::vector<Entry> e1 = {Write(1, {{"CREATE TABLE t(x)", {}}}),
                           Write(2, {{"INSERT INTO t VALUES(random())", {}}})};
  std::vector<Entry> e2 = e1;
  e2[1].epoch = 2;
  ASSERT_TRUE(r1->Apply(e1).ok());
  ASSERT_TRUE(r2->Apply(e2).ok());
  EXPECT_NE(Rows(dir.File("1.db"), "SELECT x FROM t"), Rows(dir.File("2.db"), "SELECT x FROM t"));
}

TEST(SqliteExecutorTest, FailingEntryRollsBackAloneAndStateIsDurable) {
  TempDir dir;
  const std::string path = dir.File("r.db");
  {
    auto r = OpenReplica(path);
    auto res = r->Apply(std::vector<Entry>{
        Write(1, {{"CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT NOT NULL)", {}}}),
        Write(2, {{"INSERT INTO t VALUES(1, 'a')", {}}, {"INSERT INTO t VALUES(2, 'b')", {}}}),
        Write(3, {{"INSERT INTO t VALUES(3, 'c')", {}}, {"INSERT INTO t VALUES(1, 'dup')", {}}}),
        Write(4, {{"UPDATE t SET v = v || '!'", {}}, {"SELECT * FROM t", {}}}),
        Write(5, {{"INSERT INTO nope VALUES(1)", {}}}),
        Write(6, {{"BEGIN", {}}}),
        Write(7, {{"UPDATE _vsc_replica SET applied_seq = 0", {}}}),
        Write(8, {{"INSERT INTO t VALUES(?1, ?2)", {Value::Int(9), Value::Null()}}}),
    });
    ASSERT_TRUE(res.ok()) << res.status().ToString();
    ASSERT_EQ(res->size(), 8u);
    EXPECT_EQ((*res)[1].rows_changed, 2);
    EXPECT_EQ((*res)[2].code, 19);  // SQLITE_CONSTRAINT; its first insert is rolled back too
    EXPECT_EQ((*res)[2].error, "UNIQUE constraint failed: t.id");
    EXPECT_EQ((*res)[2].rows_changed, 0);
    // What the statement before the failing one did, though rolled back (rqlite shows it).
    EXPECT_EQ((*res)[2].failed_statement, 2u);
    ASSERT_EQ((*res)[2].statements.size(), 1u);
    EXPECT_EQ((*res)[2].statements[0].last_insert_id, 3);
    EXPECT_EQ((*res)[2].statements[0].rows_affected, 1);
    EXPECT_TRUE((*res)[4].statements.empty());  // the first statement failed: nothing before it
    EXPECT_EQ((*res)[3].rows_changed, 2);       // the SELECT does not count
    EXPECT_EQ((*res)[4].code, 1);               // SQLITE_ERROR
    EXPECT_EQ((*res)[4].error, "no such table: nope");
    EXPECT_EQ((*res)[5].code, 23);  // SQLITE_AUTH: transaction control never reaches SQLite
    EXPECT_EQ((*res)[6].code, 23);
    EXPECT_EQ((*res)[7].code, 19);  // NOT NULL
    EXPECT_EQ((*res)[0].rows_changed, 0);
  }
  EXPECT_EQ(Rows(path, "SELECT id, v FROM t ORDER BY id"),
            (std::vector<std::vector<Value>>{{Value::Int(1), Value::Text("a!")},
                                             {Value::Int(2), Value::Text("b!")}}));
  auto again = OpenReplica(path);
  EXPECT_EQ(again->state().applied_seq, 8u);
  auto stored = ReadReplicaState(path);
  ASSERT_TRUE(stored.ok());
  EXPECT_EQ(stored->digest, again->state().digest);
  EXPECT_EQ(stored->epoch, 1u);
  EXPECT_EQ(ReadReplicaState(dir.File("fresh.db")).status().code(), Code::kIo);
}

// A statement that ends the whole transaction (ON CONFLICT ROLLBACK, RAISE(ROLLBACK)) still
// fails alone: batching must not change any result.
TEST(SqliteExecutorTest, TransactionRollbackInsideABatchFailsOnlyThatEntry) {
  TempDir dir;
  std::vector<Entry> es = {
      Write(1, {{"CREATE TABLE t(id INTEGER PRIMARY KEY, v)", {}},
                {"CREATE TRIGGER no_13 BEFORE INSERT ON t WHEN new.v = 13 BEGIN "
                 "SELECT RAISE(ROLLBACK, 'unlucky'); END",
                 {}}}),
      Write(2, {{"INSERT INTO t VALUES(1, random())", {}}}),
      Write(3, {{"INSERT OR ROLLBACK INTO t VALUES(1, 'dup')", {}}}),
      Write(4, {{"INSERT INTO t VALUES(2, randomblob(3))", {}}}),
      Write(5, {{"INSERT INTO t VALUES(3, 13)", {}}}),
      Write(6, {{"INSERT INTO t VALUES(4, datetime('now'))", {}}}),
  };
  auto batched = OpenReplica(dir.File("batched.db"));
  auto res = batched->Apply(es);
  ASSERT_TRUE(res.ok()) << res.status().ToString();
  EXPECT_EQ((*res)[2].code, 19);
  EXPECT_EQ((*res)[4].code, 19);
  EXPECT_EQ((*res)[4].error, "unlucky");
  auto single = OpenReplica(dir.File("single.db"));
  for (size_t i = 0; i < es.size(); ++i) {
    auto r = single->Apply(std::span<const Entry>(&es[i], 1));
    ASSERT_TRUE(r.ok());
    EXPECT_EQ((*r)[0].code, (*res)[i].code) << i;
  }
  EXPECT_EQ(batched->state().digest, single->state().digest);
  EXPECT_EQ(*Checksum(dir.File("batched.db")), *Checksum(dir.File("single.db")));
  EXPECT_EQ(Rows(dir.File("batched.db"), "SELECT id FROM t ORDER BY id").size(), 3u);
}

TEST(SqliteExecutorTest, ChecksumMarkerHashesTheContentBeforeIt) {
  TempDir dir;
  const std::string path = dir.File("r.db");
  auto r = OpenReplica(path);
  Entry mark;
  mark.epoch = 1;
  mark.seq = 3;
  mark.kind = Entry::Kind::kChecksum;
  auto res = r->Apply(std::vector<Entry>{Write(1, {{"CREATE TABLE t(x)", {}}}),
                                         Write(2, {{"INSERT INTO t VALUES(1)", {}}}), mark,
                                         Write(4, {{"INSERT INTO t VALUES(2)", {}}})});
  ASSERT_TRUE(res.ok());
  const std::string at3 = (*res)[2].checksum;
  EXPECT_EQ(at3.size(), 64u);
  EXPECT_NE(at3, *Checksum(path));
  // The same content built directly (no _vsc_replica table) hashes the same.
  const std::string other = dir.File("plain.db");
  {
    auto db = store::Database::Open(other);
    ASSERT_TRUE(db->Exec("CREATE TABLE t(x); INSERT INTO t VALUES(1)").ok());
  }
  EXPECT_EQ(*Checksum(other), at3);
}

TEST(ChecksumTest, LogicalContentNotLayout) {
  TempDir dir;
  auto make = [&](const std::string& name, const std::string& sql) {
    auto db = store::Database::Open(dir.File(name));
    EXPECT_TRUE(db.ok());
    EXPECT_TRUE(db->Exec(sql).ok()) << sql;
    return *Checksum(dir.File(name));
  };
  const std::string base =
      "CREATE TABLE a(id INTEGER PRIMARY KEY, v); CREATE TABLE b(k TEXT PRIMARY KEY, v) "
      "WITHOUT ROWID;";
  const std::string x = make("x.db", base +
                                         "INSERT INTO a VALUES(1, 'p'), (2, 2.5);"
                                         "INSERT INTO b VALUES('z', 1), ('y', x'00');");
  // Other insertion order, a VACUUM, bigger pages: same content, same hash.
  const std::string y = make("y.db", "PRAGMA page_size=8192;" + base +
                                         "INSERT INTO b VALUES('y', x'00'), ('z', 1);"
                                         "INSERT INTO a VALUES(2, 2.5), (1, 'p'); VACUUM;");
  EXPECT_EQ(x, y);
  // Storage class matters ('2' is not 2), as do table names and rowids.
  EXPECT_NE(x, make("z.db", base + "INSERT INTO a VALUES(1, 'p'), (2, '2.5');"
                                   "INSERT INTO b VALUES('z', 1), ('y', x'00');"));
  EXPECT_NE(x, make("w.db", base + "INSERT INTO a VALUES(1, 'p'), (3, 2.5);"
                                   "INSERT INTO b VALUES('z', 1), ('y', x'00');"));
  EXPECT_NE(x, make("v.db", base + "CREATE INDEX av ON a(v);"
                                   "INSERT INTO a VALUES(1, 'p'), (2, 2.5);"
                                   "INSERT INTO b VALUES('z', 1), ('y', x'00');"));
  EXPECT_FALSE(Checksum(dir.File("missing.db")).ok());
}

// ---- the property test: 10,000 random statements, 3 replicas, 3 batchings ----

class Workload {
 public:
  explicit Workload(uint64_t seed) : rng_(seed) {}

  static std::vector<Statement> Schema() {
    return {{"CREATE TABLE items(id INTEGER PRIMARY KEY, k TEXT UNIQUE, v INTEGER, blob BLOB, "
             "at TEXT DEFAULT CURRENT_TIMESTAMP, r INTEGER DEFAULT (random()))",
             {}},
            {"CREATE TABLE kv(k TEXT PRIMARY KEY, v) WITHOUT ROWID", {}},
            {"CREATE TABLE audit(id INTEGER PRIMARY KEY AUTOINCREMENT, what TEXT, "
             "at TEXT DEFAULT (datetime('now')), salt BLOB DEFAULT (randomblob(4)))",
             {}},
            {"CREATE TRIGGER items_ins AFTER INSERT ON items BEGIN "
             "INSERT INTO audit(what) VALUES('ins ' || new.k); END",
             {}},
            {"CREATE TRIGGER items_veto BEFORE UPDATE ON items WHEN new.v = 666 BEGIN "
             "SELECT RAISE(ROLLBACK, 'vetoed'); END",
             {}}};
  }

  Statement Next() {
    auto key = [&] { return Value::Text("k" + std::to_string(rng_.Uniform(400))); };
    auto small = [&](uint64_t n) { return Value::Int(static_cast<int64_t>(rng_.Uniform(n))); };
    switch (rng_.Uniform(12)) {
      case 0:
      case 1:
        return {"INSERT INTO items(k, v, blob) VALUES(?1, abs(random()) % 1000, randomblob(8))",
                {key()}};
      case 2:
        return {"INSERT INTO items(k, v) VALUES(?1, ?2)", {key(), small(700)}};
      case 3:
        return {"UPDATE items SET v = v + 1, at = datetime('now') WHERE id % ?1 = ?2",
                {Value::Int(2 + static_cast<int64_t>(rng_.Uniform(7))), small(2)}};
      case 4:
        return {"UPDATE items SET blob = randomblob(4), r = random() WHERE v < ?1", {small(300)}};
      case 5:
        return {"DELETE FROM items WHERE id % ?1 = 0 AND v > ?2",
                {Value::Int(3 + static_cast<int64_t>(rng_.Uniform(10))), small(900)}};
      case 6:
        return {"INSERT OR REPLACE INTO kv VALUES(?1, CURRENT_TIMESTAMP || ':' || random())",
                {key()}};
      case 7:
        return {"INSERT INTO kv VALUES(?1, ?2)", {key(), Value::Real(rng_.NextDouble())}};
      case 8:
        return {"INSERT OR ROLLBACK INTO items(k) VALUES(?1)", {key()}};
      case 9:
        return {"UPDATE items SET v = 666 WHERE id = ?1", {small(50)}};
      case 10:
        return {"INSERT INTO items(id, k) VALUES(?1, NULL)", {small(60)}};  // PK clashes
      default:
        return {"DELETE FROM audit WHERE id < (SELECT max(id) FROM audit) - ?1", {small(500)}};
    }
  }

  std::vector<Entry> Entries(size_t statements) {
    std::vector<Entry> out;
    Entry schema;
    schema.epoch = 1;
    schema.seq = 1;
    schema.ts_micros = kTs;
    schema.statements = Schema();
    out.push_back(schema);
    int64_t ts = kTs;
    size_t made = 0;
    while (made < statements) {
      Entry e;
      e.epoch = 1 + out.size() / 4000;  // director restarts now and then
      e.seq = out.size() + 1;
      ts += static_cast<int64_t>(rng_.Uniform(3'000'000));
      e.ts_micros = ts;
      if (rng_.Uniform(50) == 0) {
        e.kind = Entry::Kind::kChecksum;
      } else {
        const size_t n = rng_.Uniform(5) == 0 ? 2 + rng_.Uniform(3) : 1;  // atomic batches
        for (size_t i = 0; i < n && made < statements; ++i, ++made) {
          e.statements.push_back(Next());
        }
      }
      out.push_back(std::move(e));
    }
    return out;
  }

 private:
  Random rng_;
};

struct Applied {
  std::vector<EntryResult> results;
  ReplicaState state;
};

Applied ApplyInBatches(const std::string& path, const std::vector<Entry>& entries,
                       uint64_t batching_seed, size_t max_batch, const std::string& sync) {
  auto r = OpenReplica(path, sync);
  Random rng(batching_seed);
  Applied out;
  size_t i = 0;
  while (i < entries.size()) {
    const size_t n = std::min(entries.size() - i, 1 + rng.Uniform(max_batch));
    auto res = r->Apply(std::span<const Entry>(entries.data() + i, n));
    EXPECT_TRUE(res.ok()) << res.status().ToString();
    if (!res.ok()) break;
    out.results.insert(out.results.end(), res->begin(), res->end());
    i += n;
  }
  out.state = r->state();
  return out;
}

TEST(ReplicaPropertyTest, TenThousandRandomStatementsGiveIdenticalReplicas) {
  TempDir dir;
  const std::vector<Entry> entries = Workload(2024).Entries(10'000);
  const Applied a = ApplyInBatches(dir.File("a.db"), entries, 1, 1, "OFF");
  const Applied b = ApplyInBatches(dir.File("b.db"), entries, 2, 64, "NORMAL");
  const Applied c = ApplyInBatches(dir.File("c.db"), entries, 3, 1000, "FULL");
  ASSERT_EQ(a.results.size(), entries.size());
  EXPECT_EQ(a.results, b.results);
  EXPECT_EQ(a.results, c.results);
  EXPECT_EQ(a.state.applied_seq, entries.size());
  EXPECT_EQ(a.state.digest, b.state.digest);
  EXPECT_EQ(a.state.digest, c.state.digest);
  const auto sum = Checksum(dir.File("a.db"));
  ASSERT_TRUE(sum.ok()) << sum.status().ToString();
  EXPECT_EQ(*sum, *Checksum(dir.File("b.db")));
  EXPECT_EQ(*sum, *Checksum(dir.File("c.db")));

  // The workload exercises what it claims to: successes, each failure kind, markers, content.
  std::map<int, size_t> codes;
  size_t markers = 0, rolled_back = 0;
  for (size_t i = 0; i < entries.size(); ++i) {
    ++codes[a.results[i].code];
    if (entries[i].kind == Entry::Kind::kChecksum) {
      ++markers;
      EXPECT_EQ(a.results[i].checksum.size(), 64u);
    }
    if (a.results[i].error == "vetoed" ||
        a.results[i].error.find("UNIQUE constraint failed: items.k") != std::string::npos) {
      ++rolled_back;
    }
  }
  EXPECT_GT(codes[0], 3000u);
  EXPECT_GT(codes[19], 500u);
  EXPECT_GT(markers, 50u);
  EXPECT_GT(rolled_back, 100u);
  EXPECT_GT(Rows(dir.File("a.db"), "SELECT * FROM items").size(), 100u);
  EXPECT_GT(Rows(dir.File("a.db"), "SELECT * FROM audit").size(), 10u);

  // One different entry makes a different replica: the comparison above can fail.
  std::vector<Entry> changed = entries;
  changed[5000].ts_micros += 1000;
  const Applied d = ApplyInBatches(dir.File("d.db"), changed, 4, 500, "OFF");
  EXPECT_NE(d.state.digest, a.state.digest);

  // Snapshot at the middle, then replay from the snapshot's seq: equal to a full replica.
  const std::vector<Entry> head(entries.begin(), entries.begin() + 6000);
  ApplyInBatches(dir.File("half.db"), head, 5, 300, "NORMAL");
  auto snap = Snapshot(dir.File("half.db"), dir.File("snap.db"));
  ASSERT_TRUE(snap.ok()) << snap.status().ToString();
  EXPECT_EQ(snap->applied_seq, 6000u);
  auto s = OpenReplica(dir.File("snap.db"));
  EXPECT_EQ(s->state().applied_seq, 6000u);
  EXPECT_EQ(s->state().digest, snap->digest);
  auto rest = s->Apply(entries);  // the head is skipped as duplicates
  ASSERT_TRUE(rest.ok()) << rest.status().ToString();
  EXPECT_EQ(rest->size(), entries.size() - 6000);
  EXPECT_EQ(s->state().digest, a.state.digest);
  EXPECT_EQ(*Checksum(dir.File("snap.db")), *sum);
}

TEST(SnapshotTest, CopyAtEachTenthSeqMatchesTheLiveDatabase) {
  TempDir dir;
  const std::string path = dir.File("live.db");
  auto w = OpenReplica(path, "NORMAL");
  ASSERT_TRUE(w->Apply(std::vector<Entry>{Write(1, {{"CREATE TABLE t(x)", {}}})}).ok());
  for (uint64_t seq = 2; seq <= 40; ++seq) {
    ASSERT_TRUE(
        w->Apply(std::vector<Entry>{Write(
                     seq, {{"INSERT INTO t VALUES(?1)", {Value::Int(static_cast<int64_t>(seq))}}})})
            .ok());
    if (seq % 10 == 0) {
      const std::string out = dir.File("snap" + std::to_string(seq) + ".db");
      auto st = Snapshot(path, out);
      ASSERT_TRUE(st.ok()) << st.status().ToString();
      EXPECT_EQ(st->applied_seq, seq);
      EXPECT_EQ(st->digest, w->state().digest);
      EXPECT_EQ(Rows(out, "SELECT count(*) FROM t")[0][0],
                Value::Int(static_cast<int64_t>(seq - 1)));
      EXPECT_EQ(*Checksum(out), *Checksum(path));
    }
  }
  EXPECT_FALSE(Snapshot(dir.File("missing.db"), dir.File("x.db")).ok());
  // Each copy is one self-contained file in rollback-journal mode: no -wal / -shm beside it or
  // its temporary name, even after it was opened (Rows, Checksum) read-only.
  std::vector<std::string> names;
  for (const auto& f : std::filesystem::directory_iterator(dir.path())) {
    names.push_back(f.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"live.db", "live.db-shm", "live.db-wal", "snap10.db",
                                             "snap20.db", "snap30.db", "snap40.db"}));
  EXPECT_EQ(Rows(dir.File("snap40.db"), "PRAGMA journal_mode")[0][0], Value::Text("delete"));
}

// The writer applies on its own thread while this thread copies: every copy must hold exactly
// the state of one applied seq (its row count and the digest the writer had at that seq). Each
// copy waits for the writer to have moved past the previous copy's seq, and the writer keeps
// going until the copies are done, so the copies overlap the writer however the threads run.
TEST(SnapshotTest, CopyIsConsistentWhileTheWriterKeepsGoing) {
  TempDir dir;
  const std::string path = dir.File("live.db");
  auto w = OpenReplica(path, "NORMAL");
  ASSERT_TRUE(w->Apply(std::vector<Entry>{Write(1, {{"CREATE TABLE t(x)", {}}})}).ok());
  constexpr uint64_t kMax = 100000;
  constexpr int kCopies = 5;
  std::vector<Digest> digest_at(kMax + 1);  // written by the writer, read after join
  digest_at[1] = w->state().digest;
  std::atomic<uint64_t> applied{1};
  std::atomic<bool> stop{false};
  std::thread writer([&] {
    for (uint64_t seq = 2; seq <= kMax && !stop.load(); ++seq) {
      auto r = w->Apply(std::vector<Entry>{
          Write(seq, {{"INSERT INTO t VALUES(?1)", {Value::Int(static_cast<int64_t>(seq))}}})});
      if (!r.ok()) return;
      digest_at[seq] = w->state().digest;
      applied.store(seq);
    }
  });
  std::vector<std::pair<std::string, ReplicaState>> copies;
  uint64_t previous = 0;
  for (int i = 0; i < kCopies; ++i) {
    const bool moved =
        test_support::WaitUntil([&] { return applied.load() > previous; }, std::chrono::seconds(10),
                                std::chrono::milliseconds(0));
    if (!moved) break;
    const std::string out = dir.File("snap" + std::to_string(i) + ".db");
    auto st = Snapshot(path, out);
    ASSERT_TRUE(st.ok()) << st.status().ToString();
    previous = st->applied_seq;
    copies.emplace_back(out, *st);
  }
  stop.store(true);
  writer.join();
  ASSERT_EQ(copies.size(), static_cast<size_t>(kCopies))
      << "the writer stopped at seq " << applied.load();
  for (size_t i = 1; i < copies.size(); ++i) {
    EXPECT_GT(copies[i].second.applied_seq, copies[i - 1].second.applied_seq);
  }
  for (const auto& [out, st] : copies) {
    SCOPED_TRACE(out + " at seq " + std::to_string(st.applied_seq));
    ASSERT_GE(st.applied_seq, 1u);
    ASSERT_LE(st.applied_seq, applied.load());
    EXPECT_EQ(st.digest, digest_at[st.applied_seq]);
    EXPECT_EQ(Rows(out, "SELECT count(*) FROM t")[0][0],
              Value::Int(static_cast<int64_t>(st.applied_seq - 1)));
    EXPECT_EQ(ReadReplicaState(out)->applied_seq, st.applied_seq);
  }
}

}  // namespace
}  // namespace vsc::replication
