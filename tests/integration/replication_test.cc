// Replicated databases end to end (issue 3, DESIGN §7): a director and 4 real servers as
// processes on 127.0.0.1, each server with its own copy of the resource database. Writes go
// through WriteClient to the director's write port, reads through ReadClient to its SQL port;
// the replicas' state is checked through the admin API (/v1/replication, /v1/verify) and by
// opening each replica's database file directly.
//
// Crash points are drawn from a seed printed by each test (VSC_TEST_SEED overrides it), so a
// failing interleaving can be replayed.
#include <signal.h>
#include <sqlite3.h>

#include <algorithm>
#include <condition_variable>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <set>

#include "client/sql_client.h"
#include "common/random.h"
#include "integration/cluster_harness.h"
#include "proto/cluster_key.h"

namespace vsc::integration {
namespace {

using namespace std::chrono_literals;
using json = nlohmann::json;
namespace fs = std::filesystem;

// WriteResponse.code of refusals (director/replicator.h).
constexpr int kRefused = -1;
constexpr int kUnavailable = -3;
constexpr int kUnknown = -5;

constexpr int kServers = 4;

// A fresh seed per run unless VSC_TEST_SEED fixes one; printed so that any run can be repeated
// (each test also adds it to its failure messages with SCOPED_TRACE).
uint64_t TestSeed() {
  const char* fixed = std::getenv("VSC_TEST_SEED");
  const uint64_t seed =
      fixed != nullptr ? std::strtoull(fixed, nullptr, 10) : std::random_device{}();
  std::printf("random seed %llu (repeat with VSC_TEST_SEED=%llu)\n",
              static_cast<unsigned long long>(seed), static_cast<unsigned long long>(seed));
  return seed;
}

proto::SqlStatement Stmt(std::string sql, std::vector<proto::SqlValue> params = {}) {
  return client::MakeStatement(std::move(sql), std::move(params));
}

// The node column of `id` in the database file at `path`: nullopt when the row is absent.
// Opened read-only beside the running replica (WAL: a reader never blocks its writer).
Result<std::optional<std::string>> NodeInFile(sqlite3* db, uint64_t id) {
  sqlite3_stmt* st = nullptr;
  if (sqlite3_prepare_v2(db, "SELECT node FROM resources WHERE id=?1", -1, &st, nullptr) !=
      SQLITE_OK) {
    return Internal(std::string("prepare: ") + sqlite3_errmsg(db));
  }
  sqlite3_bind_int64(st, 1, static_cast<int64_t>(id));
  std::optional<std::string> out;
  int rc = sqlite3_step(st);
  if (rc == SQLITE_ROW) {
    out = std::string(reinterpret_cast<const char*>(sqlite3_column_text(st, 0)));
  } else if (rc != SQLITE_DONE) {
    std::string msg = sqlite3_errmsg(db);
    sqlite3_finalize(st);
    return Internal("step: " + msg);
  }
  sqlite3_finalize(st);
  return out;
}

struct SqliteFile {
  explicit SqliteFile(const std::string& path, bool writable) {
    rc = sqlite3_open_v2(path.c_str(), &db, writable ? SQLITE_OPEN_READWRITE : SQLITE_OPEN_READONLY,
                         nullptr);
    if (rc == SQLITE_OK) sqlite3_busy_timeout(db, 10000);
  }
  ~SqliteFile() { sqlite3_close(db); }
  sqlite3* db = nullptr;
  int rc = SQLITE_ERROR;
};

class ReplicationTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { ASSERT_FALSE(SharedDbPath().empty()); }

  void TearDown() override {
    if (cluster_) cluster_->Stop();
    if (!work_dir_.empty()) {
      if (HasFailure()) {
        std::printf("work directory kept: %s\n", work_dir_.c_str());
      } else {
        std::error_code ec;
        fs::remove_all(work_dir_, ec);
      }
    }
  }

  void StartCluster() {
    work_dir_ = MakeTempDir("vsc-repl-");
    bench::LocalClusterOptions o;
    o.vsc_binary = VSC_BINARY;
    o.work_dir = work_dir_;
    o.db_path = SharedDbPath();
    o.real_servers = kServers;
    o.heartbeat_interval_ms = 100;
    o.silent_after = 2;
    o.down_after = 5;
    o.replication = true;
    o.log_level = "info";
    auto c = bench::LocalCluster::Start(o);
    ASSERT_TRUE(c.ok()) << c.status().ToString() << " (logs in " << work_dir_ << ")";
    cluster_ = std::move(c).value();
    auto key = proto::ClusterKey::FromFile(cluster_->key_file());
    ASSERT_TRUE(key.ok()) << key.status().ToString();
    key_.emplace(*key);
    ASSERT_TRUE(cluster_->WaitAllActive(20s).ok());
    ASSERT_TRUE(WaitConverged(30s)) << Replication().dump(1);
  }

  client::WriteClient Writer() {
    auto w = client::WriteClient::Connect("127.0.0.1", cluster_->write_port(), *key_, 10s);
    EXPECT_TRUE(w.ok()) << w.status().ToString();
    return std::move(w).value();
  }
  client::ReadClient Reader() {
    auto r = client::ReadClient::Open("127.0.0.1", cluster_->sql_port(), *key_, 1s, 3);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return std::move(r).value();
  }

  // GET /v1/replication through a reset-closing connection (polled often).
  json Replication() {
    auto r = AdminHttpGet(cluster_->admin_port(), "/v1/replication", cluster_->admin_token(), 2s);
    if (!r.ok() || r->first != 200) return json::object();
    return json::parse(r->second, nullptr, false);
  }

  // Every replica IN_SYNC (and its server ACTIVE) at the log's head.
  static bool Converged(const json& rep) {
    if (!rep.is_object() || !rep.contains("replicas")) return false;
    if (rep["replicas"].size() != static_cast<size_t>(kServers)) return false;
    const uint64_t head = rep["log"]["last_seq"].get<uint64_t>();
    for (const json& r : rep["replicas"]) {
      if (r["replication"] != "IN_SYNC" || r["state"] != "ACTIVE") return false;
      if (r["applied_seq"].get<uint64_t>() != head) return false;
    }
    return true;
  }
  bool WaitConverged(Duration timeout) {
    return WaitUntil([&] { return Converged(Replication()); }, timeout, 20ms);
  }
  uint64_t Head() { return Replication()["log"]["last_seq"].get<uint64_t>(); }

  // POST /v1/verify, then polls GET /v1/verify/{seq} until every replica answered.
  json Verify() {
    auto started = cluster_->AdminPost("/v1/verify", json::object());
    EXPECT_TRUE(started.ok()) << started.status().ToString();
    if (!started.ok()) return json::object();
    const uint64_t seq = (*started)["seq"].get<uint64_t>();
    EXPECT_GT(seq, 0u);
    json result;
    const bool done = WaitUntil(
        [&] {
          auto r = AdminHttpGet(cluster_->admin_port(), "/v1/verify/" + std::to_string(seq),
                                cluster_->admin_token(), 2s);
          if (!r.ok() || r->first != 200) return false;
          result = json::parse(r->second, nullptr, false);
          return result.is_object() && result.value("complete", false);
        },
        20s, 20ms);
    EXPECT_TRUE(done) << "verify " << seq << " incomplete: " << result.dump(1);
    return result;
  }
  // Status of replica `id` in a verify result ("" when unlisted).
  static std::string VerifyStatus(const json& v, const std::string& id) {
    for (const json& r : v.value("replicas", json::array())) {
      if (r["id"] == id) return r["status"].get<std::string>();
    }
    return "";
  }
  // Asserts that every replica reported the same checksum; returns it.
  std::string ExpectAllEqual(const json& v) {
    EXPECT_TRUE(v.value("ok", false)) << v.dump(1);
    EXPECT_EQ(v.value("replicas", json::array()).size(), static_cast<size_t>(kServers))
        << v.dump(1);
    std::set<std::string> sums;
    for (const json& r : v.value("replicas", json::array())) {
      EXPECT_EQ(r["status"], "OK") << r.dump();
      sums.insert(r["checksum"].get<std::string>());
    }
    EXPECT_EQ(sums.size(), 1u) << v.dump(1);
    return sums.empty() ? "" : *sums.begin();
  }

  double Metric(const std::string& series) {
    auto r = AdminHttpGet(cluster_->admin_port(), "/metrics", cluster_->admin_token(), 2s);
    EXPECT_TRUE(r.ok() && r->first == 200);
    if (!r.ok()) return -1;
    auto v = MetricValue(r->second, series);
    EXPECT_TRUE(v.ok()) << series << ": " << v.status().ToString();
    return v.ok() ? *v : -1;
  }

  std::optional<std::string> ReadNode(client::ReadClient& reader, uint64_t id, uint64_t min_seq) {
    auto r = reader.Query(
        Stmt("SELECT node FROM resources WHERE id=?1", {client::SqlInt(static_cast<int64_t>(id))}),
        min_seq);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    if (!r.ok()) return std::nullopt;
    EXPECT_TRUE(r->ok()) << r->error();
    EXPECT_GE(r->applied_seq(), min_seq) << "answered by " << r->replica_id();
    if (r->rows_size() == 0) return std::nullopt;
    return r->rows(0).values(0).text();
  }

  std::unique_ptr<bench::LocalCluster> cluster_;
  std::string work_dir_;
  std::optional<proto::ClusterKey> key_;
};

// ---- (a) the write path and read-your-writes ----

TEST_F(ReplicationTest, WritesAreAcknowledgedWithTheirSeqAndReadYourWritesHolds) {
  ASSERT_NO_FATAL_FAILURE(StartCluster());
  client::WriteClient w = Writer();
  client::ReadClient reader = Reader();
  const uint64_t head0 = Head();

  auto ins =
      w.Execute({Stmt("INSERT INTO resources(id, node, size, updated_at) VALUES(?1, ?2, ?3, ?4)",
                      {client::SqlInt(900001), client::SqlText("node-new"), client::SqlInt(7),
                       client::SqlInt(1)})});
  ASSERT_TRUE(ins.ok()) << ins.status().ToString();
  ASSERT_TRUE(ins->ok()) << ins->error();
  EXPECT_EQ(ins->rows_changed(), 1);
  EXPECT_GT(ins->seq(), head0);
  EXPECT_EQ(ReadNode(reader, 900001, ins->seq()), "node-new");

  auto upd = w.Execute({Stmt("UPDATE resources SET node=?1 WHERE id=?2",
                             {client::SqlText("moved"), client::SqlInt(5)})});
  ASSERT_TRUE(upd.ok() && upd->ok());
  EXPECT_EQ(upd->rows_changed(), 1);
  EXPECT_GT(upd->seq(), ins->seq());
  EXPECT_EQ(ReadNode(reader, 5, upd->seq()), "moved");

  auto del = w.Execute({Stmt("DELETE FROM resources WHERE id=?1", {client::SqlInt(6)})});
  ASSERT_TRUE(del.ok() && del->ok());
  EXPECT_EQ(del->rows_changed(), 1);
  EXPECT_GT(del->seq(), upd->seq());
  EXPECT_EQ(ReadNode(reader, 6, del->seq()), std::nullopt);

  // A write that matches nothing is still sequenced and answered, with 0 rows.
  auto none = w.Execute({Stmt("DELETE FROM resources WHERE id=?1", {client::SqlInt(6)})});
  ASSERT_TRUE(none.ok() && none->ok());
  EXPECT_EQ(none->rows_changed(), 0);

  // A batch is one unit: one seq, rows summed, every effect visible together.
  auto batch = w.Execute({Stmt("INSERT INTO resources(id, node) VALUES(?1, ?2)",
                               {client::SqlInt(900002), client::SqlText("batched")}),
                          Stmt("UPDATE resources SET node='b7' WHERE id=7"),
                          Stmt("DELETE FROM resources WHERE id=8")});
  ASSERT_TRUE(batch.ok() && batch->ok())
      << (batch.ok() ? batch->error() : batch.status().ToString());
  EXPECT_EQ(batch->rows_changed(), 3);
  EXPECT_EQ(batch->seq(), none->seq() + 1);
  EXPECT_EQ(ReadNode(reader, 900002, batch->seq()), "batched");
  EXPECT_EQ(ReadNode(reader, 7, batch->seq()), "b7");
  EXPECT_EQ(ReadNode(reader, 8, batch->seq()), std::nullopt);

  // A batch whose last statement fails (duplicate key) is rolled back everywhere as a unit.
  auto failed = w.Execute({Stmt("UPDATE resources SET node='half' WHERE id=9"),
                           Stmt("INSERT INTO resources(id, node) VALUES(900001, 'dup')")});
  ASSERT_TRUE(failed.ok());
  EXPECT_FALSE(failed->ok());
  EXPECT_FALSE(failed->error().empty());
  EXPECT_NE(ReadNode(reader, 9, batch->seq()), "half");

  // A retry with the same idempotency key (its answer lost, say) applies nothing: the answer is
  // the original's, seq and all. Another key is another write.
  const auto append = [] {
    return std::vector{Stmt("UPDATE resources SET node = node || '+' WHERE id = 10")};
  };
  auto keyed = w.Execute(append(), "retry-10");
  ASSERT_TRUE(keyed.ok() && keyed->ok()) << (keyed.ok() ? keyed->error() : "");
  EXPECT_FALSE(keyed->duplicate());
  const std::optional<std::string> once = ReadNode(reader, 10, keyed->seq());
  auto retry = w.Execute(append(), "retry-10");
  ASSERT_TRUE(retry.ok() && retry->ok()) << (retry.ok() ? retry->error() : "");
  EXPECT_TRUE(retry->duplicate());
  EXPECT_EQ(retry->seq(), keyed->seq());
  auto other = w.Execute(append(), "retry-10b");
  ASSERT_TRUE(other.ok() && other->ok());
  EXPECT_FALSE(other->duplicate());
  EXPECT_EQ(ReadNode(reader, 10, other->seq()), once.value_or("?") + "+");

  // Read-your-writes over many random writes: each one read back at once, through whichever
  // replica the director picks, never shows an older value.
  const uint64_t seed = TestSeed();
  SCOPED_TRACE("seed " + std::to_string(seed) + " (VSC_TEST_SEED)");
  Random rng(seed);
  std::set<std::string> answered_by;
  uint64_t last_seq = other->seq();
  for (int i = 0; i < 200; ++i) {
    const uint64_t id = 1 + rng.Uniform(kRecords);
    const std::string node = "ryw-" + std::to_string(i);
    auto r = w.Execute({Stmt("UPDATE resources SET node=?1 WHERE id=?2",
                             {client::SqlText(node), client::SqlInt(static_cast<int64_t>(id))})});
    ASSERT_TRUE(r.ok() && r->ok());
    EXPECT_GT(r->seq(), last_seq);
    last_seq = r->seq();
    auto q = reader.Query(
        Stmt("SELECT node FROM resources WHERE id=?1", {client::SqlInt(static_cast<int64_t>(id))}),
        r->seq());
    ASSERT_TRUE(q.ok()) << q.status().ToString();
    ASSERT_TRUE(q->ok()) << q->error();
    if (r->rows_changed() == 1) {
      ASSERT_EQ(q->rows_size(), 1);
      EXPECT_EQ(q->rows(0).values(0).text(), node) << "id " << id << " from " << q->replica_id();
    }
    answered_by.insert(q->replica_id());
  }
  EXPECT_GE(answered_by.size(), 2u) << "reads should spread over the replicas";
  ASSERT_TRUE(WaitConverged(10s)) << Replication().dump(1);
  ExpectAllEqual(Verify());
}

// ---- (b) kill -9 a real server, then the director, under random writes ----

// One writer thread's record of what it sent: per id, the values it wrote in order, each
// acknowledged (certainly applied) or uncertain (no answer: may or may not be applied).
// Refused writes are not recorded: they were applied nowhere.
struct WriteHistory {
  struct Write {
    std::optional<std::string> node;  // nullopt = deleted
    bool acked = false;
  };
  std::map<uint64_t, std::vector<Write>> by_id;
  uint64_t acked = 0, uncertain = 0, refused = 0;
  std::vector<std::string> invalid;          // refusals as invalid (must stay empty)
  std::map<std::string, uint64_t> refusals;  // by the error text
};

TEST_F(ReplicationTest, AcknowledgedWritesSurviveKillingAServerAndTheDirector) {
  ASSERT_NO_FATAL_FAILURE(StartCluster());
  const uint64_t seed = TestSeed();
  SCOPED_TRACE("seed " + std::to_string(seed) + " (VSC_TEST_SEED)");
  Random plan(seed);
  constexpr int kWriters = 4;

  std::atomic<uint64_t> acked_total{0};
  std::atomic<bool> stop{false};
  std::mutex mu;
  std::condition_variable director_back;
  int director_generation = 0;  // guarded by mu

  std::vector<WriteHistory> histories(kWriters);
  std::vector<std::thread> writers;
  const uint16_t write_port = cluster_->write_port();
  const proto::ClusterKey key = *key_;
  for (int t = 0; t < kWriters; ++t) {
    writers.emplace_back([&, t] {
      WriteHistory& h = histories[t];
      Random rng(seed * 31 + t);
      std::optional<client::WriteClient> w;
      uint64_t next_insert = 1'000'000 * (t + 1);
      std::vector<uint64_t> inserted;
      int seen_generation = 0;
      for (uint64_t k = 0; !stop.load(); ++k) {
        if (!w) {
          auto c = client::WriteClient::Connect("127.0.0.1", write_port, key, 5s);
          if (!c.ok()) {
            // The director is down: wait for the test to restart it.
            std::unique_lock lock(mu);
            director_back.wait_for(
                lock, 200ms, [&] { return stop.load() || director_generation != seen_generation; });
            seen_generation = director_generation;
            continue;
          }
          w.emplace(std::move(c).value());
        }
        // Each thread owns the ids ≡ t (mod kWriters), so its own order decides each id.
        uint64_t id;
        std::optional<std::string> node = "w" + std::to_string(t) + "-" + std::to_string(k);
        proto::SqlStatement st;
        const uint64_t op = rng.Uniform(10);
        if (op < 3) {
          id = next_insert++;
          inserted.push_back(id);
          st = Stmt("INSERT INTO resources(id, node, size) VALUES(?1, ?2, 1)",
                    {client::SqlInt(static_cast<int64_t>(id)), client::SqlText(*node)});
        } else {
          id = (op < 5 && !inserted.empty())
                   ? inserted[rng.Uniform(inserted.size())]
                   : 1 + t + kWriters * rng.Uniform(kRecords / kWriters - 1);
          if (op == 9) {
            node.reset();
            st = Stmt("DELETE FROM resources WHERE id=?1",
                      {client::SqlInt(static_cast<int64_t>(id))});
          } else {
            // REPLACE: the row exists afterwards whatever came before (also after a delete).
            st = Stmt("REPLACE INTO resources(id, node, size) VALUES(?1, ?2, 2)",
                      {client::SqlInt(static_cast<int64_t>(id)), client::SqlText(*node)});
          }
        }
        auto r = w->Execute({st});
        if (r.ok() && r->ok()) {
          h.by_id[id].push_back({node, true});
          ++h.acked;
          acked_total.fetch_add(1);
        } else if (r.ok() && r->code() != kUnknown && r->code() < 0) {
          ++h.refused;  // refused before sequencing: applied nowhere
          ++h.refusals[r->error()];
          // A valid statement is only ever refused for the cluster's state, never as invalid.
          if (r->code() == kRefused) h.invalid.push_back(r->error());
        } else {
          // No answer, or sequenced with an unknown outcome: it may be in the log.
          h.by_id[id].push_back({node, false});
          ++h.uncertain;
          if (!r.ok()) w.reset();
        }
      }
    });
  }
  auto acked_plus = [&](uint64_t more) {
    const uint64_t target = acked_total.load() + more;
    return WaitUntil([&] { return acked_total.load() >= target; }, 60s, 2ms);
  };
  auto stop_writers = [&] {
    stop.store(true);
    director_back.notify_all();
    for (auto& th : writers) {
      if (th.joinable()) th.join();
    }
    writers.clear();
  };

  // An ASSERT below returns early: the writers must still be stopped and joined.
  struct JoinOnExit {
    std::function<void()> f;
    ~JoinOnExit() { f(); }
  } join_on_exit{stop_writers};

  constexpr int kRounds = 3;
  for (int round = 0; round < kRounds; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    // 1. kill -9 one real server at a random point, restart it at another.
    const int victim = static_cast<int>(plan.Uniform(kServers));
    EXPECT_TRUE(acked_plus(100 + plan.Uniform(800)));
    ASSERT_TRUE(cluster_->SignalServer(victim, SIGKILL).ok());
    const bool progressed_without = acked_plus(100 + plan.Uniform(500));
    EXPECT_TRUE(progressed_without)
        << "writes must go on while " << cluster_->server_id(victim) << " is dead";
    ASSERT_TRUE(WaitUntil([&] { return !cluster_->server_running(victim); }, 10s));
    auto restarted = cluster_->RestartServer(victim);
    ASSERT_TRUE(restarted.ok()) << restarted.ToString();
    EXPECT_TRUE(acked_plus(100 + plan.Uniform(800)));

    // 2. kill -9 the director at a random point, restart it on the same ports and log.
    ASSERT_TRUE(cluster_->SignalDirector(SIGKILL).ok());
    Status back = Status::Ok();
    // RestartDirector refuses (FailedPrecondition) until the killed process has been reaped.
    ASSERT_TRUE(WaitUntil(
        [&] {
          back = cluster_->RestartDirector();
          return back.code() != Code::kFailedPrecondition;
        },
        10s, 20ms));
    ASSERT_TRUE(back.ok()) << back.ToString();
    {
      std::lock_guard lock(mu);
      ++director_generation;
    }
    director_back.notify_all();
    ASSERT_TRUE(cluster_->WaitAllActive(30s).ok());
    EXPECT_TRUE(acked_plus(200 + plan.Uniform(700))) << "writes must resume after the restart";
  }
  stop_writers();

  uint64_t acked = 0, uncertain = 0, refused = 0;
  for (const auto& h : histories) {
    acked += h.acked;
    uncertain += h.uncertain;
    refused += h.refused;
    EXPECT_TRUE(h.invalid.empty())
        << h.invalid.size() << " valid writes refused, e.g. " << h.invalid.front();
  }
  std::map<std::string, uint64_t> refusals;
  for (const auto& h : histories) {
    for (const auto& [why, n] : h.refusals) refusals[why] += n;
  }
  for (const auto& [why, n] : refusals) {
    std::printf("refused as '%s': %llu\n", why.c_str(), static_cast<unsigned long long>(n));
  }
  std::printf("writes: %llu acknowledged, %llu uncertain, %llu refused\n",
              static_cast<unsigned long long>(acked), static_cast<unsigned long long>(uncertain),
              static_cast<unsigned long long>(refused));

  ASSERT_TRUE(WaitConverged(60s)) << Replication().dump(1);
  ExpectAllEqual(Verify());
  ASSERT_TRUE(WaitConverged(10s)) << Replication().dump(1);

  // Every acknowledged write is in every replica's file: each id holds its last acknowledged
  // value, or the value of an uncertain write sent after it.
  for (int i = 0; i < kServers; ++i) {
    SqliteFile f(cluster_->server_db(i), false);
    ASSERT_EQ(f.rc, SQLITE_OK) << cluster_->server_db(i);
    size_t checked = 0;
    for (const auto& h : histories) {
      for (const auto& [id, writes] : h.by_id) {
        auto last_acked = std::find_if(writes.rbegin(), writes.rend(),
                                       [](const WriteHistory::Write& x) { return x.acked; });
        if (last_acked == writes.rend()) continue;
        std::vector<std::optional<std::string>> allowed = {last_acked->node};
        for (auto it = writes.rbegin(); it != last_acked; ++it) allowed.push_back(it->node);
        auto got = NodeInFile(f.db, id);
        ASSERT_TRUE(got.ok()) << got.status().ToString();
        EXPECT_NE(std::find(allowed.begin(), allowed.end(), *got), allowed.end())
            << cluster_->server_id(i) << " id " << id << " holds " << got->value_or("(absent)")
            << ", last acknowledged " << last_acked->node.value_or("(deleted)");
        ++checked;
      }
    }
    EXPECT_GT(checked, 100u);
  }
}

// ---- (c) a replica altered behind its back ----

TEST_F(ReplicationTest, ReplicaAlteredBehindItsBackIsDetectedAndRebuilt) {
  ASSERT_NO_FATAL_FAILURE(StartCluster());
  client::WriteClient w = Writer();
  for (int i = 0; i < 20; ++i) {
    auto r = w.Execute({Stmt("UPDATE resources SET size=?1 WHERE id=?2",
                             {client::SqlInt(i), client::SqlInt(100 + i)})});
    ASSERT_TRUE(r.ok() && r->ok());
  }
  ASSERT_TRUE(WaitConverged(10s));
  const std::string healthy = ExpectAllEqual(Verify());

  // Change one row of rs2's file with a second SQLite connection while rs2 runs.
  const int victim = 1;
  const std::string id = cluster_->server_id(victim);
  {
    SqliteFile f(cluster_->server_db(victim), true);
    ASSERT_EQ(f.rc, SQLITE_OK);
    char* err = nullptr;
    ASSERT_EQ(sqlite3_exec(f.db, "UPDATE resources SET node='tampered' WHERE id=42", nullptr,
                           nullptr, &err),
              SQLITE_OK)
        << (err ? err : "");
    ASSERT_EQ(sqlite3_changes(f.db), 1);
  }
  const double divergences = Metric("vsc_replication_divergences_total");

  json v = Verify();
  EXPECT_FALSE(v.value("ok", true)) << v.dump(1);
  EXPECT_EQ(VerifyStatus(v, id), "MISMATCH") << v.dump(1);
  for (int i = 0; i < kServers; ++i) {
    if (i != victim) {
      EXPECT_EQ(VerifyStatus(v, cluster_->server_id(i)), "OK") << v.dump(1);
    }
  }
  EXPECT_EQ(v["expected"], healthy) << "the majority's checksum is the expected one";

  // The director rebuilds it from a healthy peer; it comes back in sync and equal.
  ASSERT_TRUE(WaitUntil([&] { return Metric("vsc_replication_divergences_total") > divergences; },
                        10s, 20ms));
  ASSERT_TRUE(WaitConverged(60s)) << Replication().dump(1);
  // Writes go on to every replica, the rebuilt one included.
  auto after = w.Execute({Stmt("UPDATE resources SET node='after' WHERE id=43")});
  if (!after.ok()) {  // the session may have ended during the rebuild: reconnect once
    w = Writer();
    after = w.Execute({Stmt("UPDATE resources SET node='after' WHERE id=43")});
  }
  ASSERT_TRUE(after.ok() && after->ok());
  ASSERT_TRUE(WaitConverged(10s)) << Replication().dump(1);
  ExpectAllEqual(Verify());
  SqliteFile f(cluster_->server_db(victim), false);
  ASSERT_EQ(f.rc, SQLITE_OK);
  auto node = NodeInFile(f.db, 42);
  ASSERT_TRUE(node.ok());
  EXPECT_NE(*node, "tampered");
  auto node43 = NodeInFile(f.db, 43);
  ASSERT_TRUE(node43.ok());
  EXPECT_EQ(*node43, "after");

  // The same while the server is down: its file loses a row, it comes back at its old position
  // (its digest chain is intact, so it streams), and the next verify finds and repairs it.
  const int stopped = 2;
  const std::string stopped_id = cluster_->server_id(stopped);
  ASSERT_TRUE(cluster_->SignalServer(stopped, SIGKILL).ok());
  ASSERT_TRUE(WaitUntil([&] { return !cluster_->server_running(stopped); }, 10s));
  {
    SqliteFile g(cluster_->server_db(stopped), true);
    ASSERT_EQ(g.rc, SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(g.db, "DELETE FROM resources WHERE id=77", nullptr, nullptr, nullptr),
              SQLITE_OK);
    ASSERT_EQ(sqlite3_changes(g.db), 1);
  }
  auto restarted = cluster_->RestartServer(stopped);
  ASSERT_TRUE(restarted.ok()) << restarted.ToString();
  ASSERT_TRUE(WaitConverged(30s)) << Replication().dump(1);
  const double divergences2 = Metric("vsc_replication_divergences_total");
  json v2 = Verify();
  EXPECT_EQ(VerifyStatus(v2, stopped_id), "MISMATCH") << v2.dump(1);
  EXPECT_FALSE(v2.value("ok", true));
  ASSERT_TRUE(WaitUntil([&] { return Metric("vsc_replication_divergences_total") > divergences2; },
                        10s, 20ms));
  ASSERT_TRUE(WaitConverged(60s)) << Replication().dump(1);
  ExpectAllEqual(Verify());
  SqliteFile h(cluster_->server_db(stopped), false);
  ASSERT_EQ(h.rc, SQLITE_OK);
  auto node77 = NodeInFile(h.db, 77);
  ASSERT_TRUE(node77.ok());
  EXPECT_EQ(*node77, std::optional<std::string>(SharedOracle().Expect(77).node));
}

// ---- (d) bad input ----

TEST_F(ReplicationTest, BadInputIsRefusedClearlyAndAppliesNothing) {
  ASSERT_NO_FATAL_FAILURE(StartCluster());
  client::WriteClient w = Writer();
  client::ReadClient reader = Reader();
  const std::string before = ExpectAllEqual(Verify());
  ASSERT_TRUE(WaitConverged(10s));
  const uint64_t head = Head();
  const double refused0 = Metric("vsc_writes_total{outcome=\"refused\"}");

  struct Case {
    std::string what;
    std::vector<proto::SqlStatement> statements;
  };
  std::vector<Case> cases = {
      {"syntax error", {Stmt("UPDATE resources SET node = WHERE id=1")}},
      {"two statements",
       {Stmt(
           "UPDATE resources SET node='x' WHERE id=1; UPDATE resources SET node='y' WHERE id=2")}},
      {"select on the write port", {Stmt("SELECT node FROM resources WHERE id=1")}},
      {"unknown table", {Stmt("DELETE FROM no_such_table")}},
      {"unknown column", {Stmt("UPDATE resources SET colour='red' WHERE id=1")}},
      {"oversized statement",
       {Stmt("UPDATE resources SET node='" + std::string(70 * 1024, 'z') + "' WHERE id=1")}},
      {"a bad statement in a batch",
       {Stmt("UPDATE resources SET node='x' WHERE id=1"), Stmt("UPDATE resources SET")}},
  };
  for (const Case& c : cases) {
    auto r = w.Execute(c.statements);
    ASSERT_TRUE(r.ok()) << c.what << ": " << r.status().ToString();
    EXPECT_FALSE(r->ok()) << c.what;
    EXPECT_EQ(r->code(), kRefused) << c.what << ": " << r->error();
    EXPECT_FALSE(r->error().empty()) << c.what;
    EXPECT_EQ(r->seq(), 0u) << c.what << " must not be sequenced";
  }
  EXPECT_EQ(Metric("vsc_writes_total{outcome=\"refused\"}"), refused0 + cases.size());
  // An empty request is refused by the client before it is sent.
  auto empty = w.Execute({});
  EXPECT_EQ(empty.status().code(), Code::kInvalidArgument);
  EXPECT_EQ(ReadNode(reader, 1, 0), std::optional<std::string>(SharedOracle().Expect(1).node));

  // A write sealed with another key: no answer (the session is closed) and counted.
  const double unauth0 = Metric("vsc_write_dropped_total{reason=\"unauthenticated\"}");
  auto other = proto::ClusterKey::Generate();
  ASSERT_TRUE(other.ok());
  auto forged = client::WriteClient::Connect("127.0.0.1", cluster_->write_port(), *other, 2s);
  ASSERT_TRUE(forged.ok());
  auto fr = forged->Execute({Stmt("UPDATE resources SET node='forged' WHERE id=2")});
  EXPECT_TRUE(!fr.ok() || !fr->ok()) << "a forged write must not be acknowledged";
  EXPECT_TRUE(WaitUntil(
      [&] { return Metric("vsc_write_dropped_total{reason=\"unauthenticated\"}") > unauth0; }, 5s,
      20ms));
  EXPECT_EQ(Head(), head) << "nothing was sequenced";

  // Every real server down: a clear refusal, nothing applied once they are back.
  for (int i = 0; i < kServers; ++i) ASSERT_TRUE(cluster_->SignalServer(i, SIGKILL).ok());
  for (int i = 0; i < kServers; ++i) {
    ASSERT_TRUE(cluster_->WaitForState(cluster_->server_id(i), "DOWN", 15s).ok());
  }
  auto down = w.Execute({Stmt("UPDATE resources SET node='while-down' WHERE id=3")});
  ASSERT_TRUE(down.ok()) << down.status().ToString();
  EXPECT_FALSE(down->ok());
  EXPECT_EQ(down->code(), kUnavailable) << down->error();
  EXPECT_NE(down->error().find("unavailable"), std::string::npos) << down->error();
  EXPECT_EQ(Head(), head);
  for (int i = 0; i < kServers; ++i) {
    ASSERT_TRUE(WaitUntil([&] { return !cluster_->server_running(i); }, 10s));
    auto s = cluster_->RestartServer(i);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
  ASSERT_TRUE(WaitConverged(60s)) << Replication().dump(1);
  EXPECT_EQ(ExpectAllEqual(Verify()), before) << "the content is what it was before";
  for (int i = 0; i < kServers; ++i) {
    SqliteFile f(cluster_->server_db(i), false);
    ASSERT_EQ(f.rc, SQLITE_OK);
    for (uint64_t id : {1, 2, 3}) {
      auto n = NodeInFile(f.db, id);
      ASSERT_TRUE(n.ok());
      EXPECT_EQ(*n, std::optional<std::string>(SharedOracle().Expect(id).node))
          << cluster_->server_id(i) << " id " << id;
    }
  }
}

}  // namespace
}  // namespace vsc::integration
