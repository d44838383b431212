// The replicated databases and the ring on IPv6 (issue 12, "IPv4 and IPv6 alike"): a director
// whose `listen` is ::1 and three real servers listening and registering on ::1, with
// replication and the clip relay. Every cluster path that carries addresses is crossed once:
// the write port and the SQL read port through the client library (the read router forwards
// with the forward header's IPv6 form and the replica answers the client itself), the HTTP
// API's reads over the replicas' TCP read path, a rebuild from a peer's snapshot (HTTP between
// real servers on ::1), and publish/fetch on relay nodes listening on ::1.
#include <sqlite3.h>

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "client/ring_client.h"
#include "client/sql_client.h"
#include "common/file_text.h"
#include "common/subprocess.h"
#include "integration/cluster_harness.h"
#include "proto/cluster_key.h"

namespace vsc::integration {
namespace {

using json = nlohmann::json;
using namespace std::chrono_literals;

class ReplicationIpv6Test : public ClusterTest {
 protected:
  void SetUp() override {
    StartCluster([](bench::LocalClusterOptions& o) {
      o.host = "::1";
      o.replication = true;
      o.relay = true;
    });
    if (HasFatalFailure()) return;
    auto key = proto::ClusterKey::FromFile(cluster_->key_file());
    ASSERT_TRUE(key.ok()) << key.status().ToString();
    key_.emplace(*key);
    ASSERT_TRUE(WaitUntil([&] { return InSync(); }, 30s)) << Replication().dump(1);
  }

  json Replication() {
    auto r = AdminHttpGet(cluster_->admin_port(), "/v1/replication", cluster_->admin_token(), 2s);
    if (!r.ok() || r->first != 200) return json::object();
    return json::parse(r->second, nullptr, false);
  }
  // Every replica IN_SYNC at the log's head.
  bool InSync() {
    const json rep = Replication();
    if (!rep.is_object() || rep.value("replicas", json::array()).size() != kServers) return false;
    for (const json& r : rep["replicas"]) {
      if (r["replication"] != "IN_SYNC" || r["applied_seq"] != rep["log"]["last_seq"]) {
        return false;
      }
    }
    return true;
  }

  uint64_t Write(client::WriteClient& w, const std::string& node, int64_t id) {
    auto r = w.Execute({client::MakeStatement("UPDATE resources SET node=?1 WHERE id=?2",
                                              {client::SqlText(node), client::SqlInt(id)})});
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    if (!r.ok()) return 0;
    EXPECT_TRUE(r->ok()) << r->error();
    return r->seq();
  }

  std::optional<proto::ClusterKey> key_;
};

TEST_F(ReplicationIpv6Test, WritesReadsSnapshotsAndTheRingWorkOverIpv6) {
  // Writes through the write port on [::1].
  auto w = client::WriteClient::Connect("::1", cluster_->write_port(), *key_, 10s);
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  const uint64_t seq = Write(*w, "over-v6", 7);
  ASSERT_GT(seq, 0u);

  // Reads through the SQL read port on [::1]: forwarded to a replica on ::1 naming the IPv6
  // client, which answers it directly; read-your-writes holds.
  auto reader = client::ReadClient::Open("[::1]", cluster_->sql_port(), *key_, 2s, 2);
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  std::set<std::string> answered_by;
  for (int i = 0; i < 6; ++i) {
    auto r = reader->Query(client::MakeStatement("SELECT node FROM resources WHERE id=7"), seq);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    ASSERT_TRUE(r->ok()) << r->error();
    ASSERT_EQ(r->rows_size(), 1);
    EXPECT_EQ(r->rows(0).values(0).text(), "over-v6");
    EXPECT_GE(r->applied_seq(), seq);
    answered_by.insert(r->replica_id());
  }
  EXPECT_EQ(answered_by.count("director"), 0u) << "a replica answers, not the director";
  EXPECT_GE(answered_by.size(), 2u) << "reads spread over the replicas";

  // `vsc sql` as an operator types it, the director a bare IPv6 address: a write, and a read
  // through the director's relay to a replica's TCP read path on ::1.
  {
    SpawnOptions so;
    so.argv = {VSC_BINARY,
               "sql",
               "--key-file",
               cluster_->key_file(),
               "--director",
               "::1",
               "--write-port",
               std::to_string(cluster_->write_port()),
               "--http-port",
               std::to_string(cluster_->http_port()),
               "--timeout-ms",
               "5000",
               "--format",
               "csv",
               "-e",
               "UPDATE resources SET node='by-cli' WHERE id=9; "
               "SELECT node FROM resources WHERE id=9"};
    so.log_path = work_dir_ + "/sql-cli.out";
    auto p = Subprocess::Spawn(so);
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    EXPECT_EQ(p->Wait(60s), std::optional<int>(0));
    auto out = ReadFileText(so.log_path);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    EXPECT_NE(out->find("by-cli"), std::string::npos) << *out;
  }

  // The HTTP API reads over the replicas' TCP read path ("sql-tcp" on ::1).
  auto q = AdminHttpGet(cluster_->http_port(),
                        "/db/query?level=none&q=SELECT%20node%20FROM%20resources%20WHERE%20id%3D7",
                        "", 5s);
  ASSERT_TRUE(q.ok()) << q.status().ToString();
  EXPECT_EQ(q->first, 200) << q->second;
  EXPECT_NE(q->second.find("over-v6"), std::string::npos) << q->second;

  // A replica altered behind its back is rebuilt from a peer's snapshot, fetched over [::1].
  const int victim = 1;
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(
        sqlite3_open_v2(cluster_->server_db(victim).c_str(), &db, SQLITE_OPEN_READWRITE, nullptr),
        SQLITE_OK);
    sqlite3_busy_timeout(db, 10000);
    const int rc = sqlite3_exec(db, "UPDATE resources SET node='tampered' WHERE id=7", nullptr,
                                nullptr, nullptr);
    sqlite3_close(db);
    ASSERT_EQ(rc, SQLITE_OK);
  }
  const double divergences = Metric("vsc_replication_divergences_total");
  const double snapshots = Metric("vsc_replication_snapshots_ordered_total");
  ASSERT_TRUE(cluster_->AdminPost("/v1/verify", json::object()).ok());
  ASSERT_TRUE(
      WaitUntil([&] { return Metric("vsc_replication_divergences_total") > divergences; }, 10s));
  ASSERT_TRUE(WaitUntil([&] { return InSync(); }, 60s)) << Replication().dump(1);
  EXPECT_GT(Metric("vsc_replication_snapshots_ordered_total"), snapshots);
  const uint64_t seq2 = Write(*w, "after-rebuild", 8);
  ASSERT_TRUE(WaitUntil([&] { return InSync(); }, 10s)) << Replication().dump(1);
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(
        sqlite3_open_v2(cluster_->server_db(victim).c_str(), &db, SQLITE_OPEN_READONLY, nullptr),
        SQLITE_OK);
    sqlite3_busy_timeout(db, 10000);
    sqlite3_stmt* st = nullptr;
    ASSERT_EQ(sqlite3_prepare_v2(db, "SELECT node FROM resources WHERE id IN (7, 8) ORDER BY id",
                                 -1, &st, nullptr),
              SQLITE_OK);
    std::vector<std::string> nodes;
    while (sqlite3_step(st) == SQLITE_ROW) {
      nodes.emplace_back(reinterpret_cast<const char*>(sqlite3_column_text(st, 0)));
    }
    sqlite3_finalize(st);
    sqlite3_close(db);
    EXPECT_EQ(nodes, (std::vector<std::string>{"over-v6", "after-rebuild"}))
        << "rebuilt from a healthy peer, then given seq " << seq2;
  }

  // The ring: the director's table names the relay nodes on ::1; clients publish to the owner
  // straight away (prefetch) and through the director, and fetch back what they published.
  for (client::RingMode mode : {client::RingMode::kPrefetch, client::RingMode::kViaDirector}) {
    SCOPED_TRACE(std::string(client::RingModeName(mode)));
    client::RingClientOptions o;
    o.director_host = "::1";
    o.ring_port = cluster_->ring_port();
    o.mode = mode;
    o.timeout = 2s;
    o.attempts = 10;
    client::RingClient ring(o, clock_);
    const std::string group = "v6-" + std::string(client::RingModeName(mode));
    for (uint64_t n = 1; n <= 5; ++n) {
      auto ack = ring.Publish(group, std::vector<uint8_t>(10, static_cast<uint8_t>(n)));
      ASSERT_TRUE(ack.ok()) << ack.status().ToString();
      EXPECT_EQ(ack->seq, n);
      EXPECT_EQ(ack->node.rfind("[::1]:", 0), 0u) << ack->node;
    }
    auto fetched = ring.Fetch(group, 0);
    ASSERT_TRUE(fetched.ok()) << fetched.status().ToString();
    ASSERT_EQ(fetched->clips.size(), 5u);
    EXPECT_EQ(fetched->clips.back().bytes, std::vector<uint8_t>(10, 5));
  }
}

}  // namespace
}  // namespace vsc::integration
