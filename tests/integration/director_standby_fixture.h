// DirectorStandbyFixture: three `etcd` members on 127.0.0.1, director A with its real servers
// (bench::LocalCluster) and director B with the same configuration in its own directory, and the
// calls the standby tests make on them (issue 11: director_standby_test.cc,
// director_in_sync_test.cc).
#pragma once

#include <signal.h>

#include <fstream>

#include "client/sql_client.h"
#include "common/subprocess.h"
#include "director/etcd_client.h"
#include "director/service_table_sync.h"
#include "integration/cluster_harness.h"
#include "integration/etcd_cluster.h"
#include "integration/tcp_echo.h"
#include "integration/vsc_process.h"
#include "proto/cluster_key.h"
#include "support/peer_process.h"

namespace vsc::integration {

using namespace std::chrono_literals;

inline constexpr uint32_t kTtlMs = 2000;
inline constexpr uint32_t kEtcdTimeoutMs = 500;

inline bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// A director as a child process with its own directory, started with `args`.
struct StandbyDirector {
  std::unique_ptr<Subprocess> process;
  uint16_t admin_port = 0;
  uint16_t write_port = 0;
  uint16_t sql_port = 0;
  std::string token;
};

class DirectorStandbyFixture : public ClusterTest {
 protected:
  using json = nlohmann::json;

  void SetUp() override {
    etcd_dir_ = MakeTempDir("vsc-etcd");
    auto etcd = EtcdCluster::Start(etcd_dir_, 3, 20s);
    // etcd is a test dependency (scripts/install-deps): without it the test fails, naming it.
    ASSERT_TRUE(etcd.ok()) << etcd.status().ToString();
    etcd_ = std::move(etcd).value();
  }
  void TearDown() override {
    b_.process.reset();
    ClusterTest::TearDown();
    etcd_.reset();
    if (!HasFailure()) std::filesystem::remove_all(etcd_dir_);
  }

  std::vector<std::string> LeaseArgs() const {
    std::vector<std::string> a;
    for (const std::string& url : etcd_->ClientUrls()) a.insert(a.end(), {"--etcd-endpoints", url});
    a.insert(a.end(),
             {"--cluster-name", "standby-test", "--sequencer-lease-ttl-ms", std::to_string(kTtlMs),
              "--etcd-timeout-ms", std::to_string(kEtcdTimeoutMs)});
    return a;
  }

  // Director A (with one real server) through LocalCluster, waiting until it holds the lease.
  void StartA() {
    ASSERT_NO_FATAL_FAILURE(StartCluster([this](bench::LocalClusterOptions& o) {
      o.replication = true;
      o.real_servers = 1;
      o.director_extra_args = LeaseArgs();
    }));
    ASSERT_TRUE(WaitUntil(
        [&] { return Sequencing(cluster_->admin_port(), cluster_->admin_token()); }, 10s, 20ms))
        << "director A never took the sequencer lease";
  }

  // Director A with two real servers that are given B's control port too, waiting until A
  // holds the lease; B is started by the caller (StartB(b_control)).
  void StartAWithServersListing(uint16_t b_control) {
    ASSERT_NO_FATAL_FAILURE(StartCluster([&](bench::LocalClusterOptions& o) {
      o.replication = true;
      o.real_servers = 2;
      o.director_extra_args = LeaseArgs();
      o.rs_extra_args = {"--director", "127.0.0.1:" + std::to_string(b_control)};
    }));
    ASSERT_TRUE(WaitUntil(
        [&] { return Sequencing(cluster_->admin_port(), cluster_->admin_token()); }, 10s, 20ms))
        << "director A never took the sequencer lease";
  }

  // Director B: the same configuration, its own log, ports and token; `control_port` 0 = any.
  void StartB(uint16_t control_port = 0) {
    const std::string dir = work_dir_ + "/b";
    std::filesystem::create_directories(dir);
    SpawnOptions so;
    so.argv = {VSC_BINARY,           "director",
               "--key-file",         cluster_->key_file(),
               "--lookup-port",      "0",
               "--control-port",     std::to_string(control_port),
               "--heartbeat-port",   "0",
               "--admin-port",       "0",
               "--ring-port",        "0",
               "--http-port",        "0",
               "--write-port",       "0",
               "--sql-port",         "0",
               "--workers",          "1",
               "--schema-db",        SharedDbPath(),
               "--log-file",         dir + "/log.db",
               "--admin-token-file", dir + "/token",
               "--ready-file",       dir + "/ready"};
    for (const std::string& a : LeaseArgs()) so.argv.push_back(a);
    so.log_path = dir + "/director.log";
    auto p = Subprocess::Spawn(so);
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    b_.process = std::make_unique<Subprocess>(std::move(p).value());
    auto ready = WaitForFile(dir + "/ready", 10s, b_.process.get());
    ASSERT_TRUE(ready.ok()) << ready.status().ToString() << " (see " << so.log_path << ")";
    const json j = json::parse(*ready);
    b_.admin_port = j.at("admin_port").get<uint16_t>();
    b_.write_port = j.at("write_port").get<uint16_t>();
    b_.sql_port = j.at("sql_port").get<uint16_t>();
    b_.token = ReadFile(dir + "/token");
    while (!b_.token.empty() && b_.token.back() == '\n') b_.token.pop_back();
  }

  // B has seen A's claim: it is a standby that names A (10 s at most).
  bool BSeesAnotherHolder() {
    return WaitUntil(
        [&] {
          auto j = Replication(b_.admin_port, b_.token);
          return j && Contains((*j)["sequencer"].value("reason", ""),
                               "another director holds the sequencer lease");
        },
        10s, 20ms);
  }

  static std::optional<json> Replication(uint16_t admin_port, const std::string& token) {
    auto r = AdminHttpGet(admin_port, "/v1/replication", token, 2s);
    if (!r.ok() || r->first != 200) return std::nullopt;
    json j = json::parse(r->second, nullptr, false);
    if (!j.is_object() || !j.contains("sequencer")) return std::nullopt;
    return j;
  }
  static bool Sequencing(uint16_t admin_port, const std::string& token) {
    auto j = Replication(admin_port, token);
    return j && (*j)["sequencer"]["sequencing"] == true;
  }
  // Holds the sequencer lease: sequencing, or promoting before it sequences.
  static bool HoldsLease(uint16_t admin_port, const std::string& token) {
    auto j = Replication(admin_port, token);
    return j &&
           ((*j)["sequencer"]["sequencing"] == true || (*j)["sequencer"].value("promoting", false));
  }
  static uint64_t Epoch(uint16_t admin_port, const std::string& token) {
    auto j = Replication(admin_port, token);
    return j ? j->value("epoch", uint64_t{0}) : 0;
  }

  // The size of resource 7, read through a director's SQL port once a replica is at `min_seq`.
  std::optional<int64_t> Size7(uint16_t sql_port, uint64_t min_seq) {
    auto key = proto::ClusterKey::FromFile(cluster_->key_file());
    if (!key.ok()) return std::nullopt;
    auto rc = client::ReadClient::Open("127.0.0.1", sql_port, *key, 5s);
    if (!rc.ok()) return std::nullopt;
    auto r =
        rc->Query(client::MakeStatement("SELECT size FROM resources WHERE id = 7", {}), min_seq);
    if (!r.ok() || !r->ok() || r->rows_size() != 1) return std::nullopt;
    return r->rows(0).values(0).integer();
  }

  // One UPDATE through a director's write port: its answer.
  proto::WriteResponse Write(uint16_t write_port) {
    auto key = proto::ClusterKey::FromFile(cluster_->key_file());
    EXPECT_TRUE(key.ok());
    auto w = client::WriteClient::Connect("127.0.0.1", write_port, *key, 5s);
    EXPECT_TRUE(w.ok()) << w.status().ToString();
    if (!w.ok()) return {};
    auto r = w->Execute({client::MakeStatement("UPDATE resources SET size = size + 1 WHERE id = ?1",
                                               {client::SqlInt(7)})});
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : proto::WriteResponse{};
  }

  // `n` UPDATEs through A, each acknowledged: the last one's seq.
  uint64_t WriteThroughA(int n) {
    uint64_t last = 0;
    for (int i = 0; i < n; ++i) {
      proto::WriteResponse w = Write(cluster_->write_port());
      EXPECT_TRUE(w.ok()) << w.error();
      last = w.seq();
    }
    return last;
  }

  // The first write B commits, tried every 50 ms for 20 s (nullopt, the last error recorded as
  // a failure, when none is).
  std::optional<proto::WriteResponse> FirstWriteOnB() {
    proto::WriteResponse next;
    const bool ok = WaitUntil(
        [&] {
          next = Write(b_.write_port);
          return next.ok();
        },
        20s, 50ms);
    if (ok) return next;
    ADD_FAILURE() << "B never sequenced: " << next.error();
    return std::nullopt;
  }

  // B's replication status with `count` replicas, every one IN_SYNC.
  std::optional<json> ExpectReplicasInSyncOnB(size_t count) {
    auto j = Replication(b_.admin_port, b_.token);
    if (!j.has_value()) {
      ADD_FAILURE() << "no replication status from B";
      return std::nullopt;
    }
    EXPECT_EQ((*j)["replicas"].size(), count) << j->dump();
    for (const auto& r : (*j)["replicas"]) {
      EXPECT_EQ(r.value("replication", ""), "IN_SYNC") << r.dump();
    }
    return j;
  }

  std::string etcd_dir_;
  std::unique_ptr<EtcdCluster> etcd_;
  StandbyDirector b_;
};

}  // namespace vsc::integration
