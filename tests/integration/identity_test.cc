// Operator safety with real processes (issue 6, items 3, 5, 6): a second real server started
// with an id in use is refused and exits while the holder keeps serving, and a restarted holder
// is welcome; a wrong cluster key and a director that is not listening are reported, by the
// agent with the director's address and by `vsc sql` for writes and reads. (Remove of a live
// server: cluster_test's drain-and-remove test.)
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>

#include <filesystem>

#include "common/subprocess.h"
#include "integration/cluster_harness.h"
#include "integration/vsc_process.h"
#include "proto/cluster_key.h"

namespace vsc::integration {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using json = nlohmann::json;

constexpr auto npos = std::string::npos;

// Polls until the file at `path` contains `needle`.
bool WaitForText(const std::string& path, const std::string& needle, Duration timeout) {
  return WaitUntil([&] { return ReadFile(path).find(needle) != npos; }, timeout, 20ms);
}

// A cluster key other than the cluster's, in dir/wrong.key.
std::string WriteWrongKey(const std::string& dir) {
  const std::string path = dir + "/wrong.key";
  auto key = proto::ClusterKey::Generate();
  EXPECT_TRUE(key.ok());
  if (key.ok()) {
    EXPECT_TRUE(key->WriteFile(path).ok());
  }
  return path;
}

// One more `vsc realserver`, beside the cluster's, on a copy of the database of its own; logs
// to dir/NAME.log, ports in dir/NAME.ready.
Result<Subprocess> SpawnRealServer(const std::string& dir, const std::string& name,
                                   const std::string& id, const std::string& key_file,
                                   uint16_t control_port) {
  const std::string db = dir + "/" + name + ".db";
  std::error_code ec;
  fs::copy_file(SharedDbPath(), db, fs::copy_options::overwrite_existing, ec);
  if (ec) return IoError("copy the database to " + db + ": " + ec.message());
  SpawnOptions so;
  so.argv = {VSC_BINARY,     "realserver",
             "--id",         id,
             "--key-file",   key_file,
             "--director",   "127.0.0.1:" + std::to_string(control_port),
             "--db",         db,
             "--workers",    "1",
             "--ready-file", dir + "/" + name + ".ready"};
  so.log_path = dir + "/" + name + ".log";
  return Subprocess::Spawn(so);
}

// Runs `vsc sql` with one statement; returns (exit code, stdout+stderr).
std::pair<int, std::string> RunSql(const std::string& dir, const std::string& director,
                                   const std::string& key_file, const std::string& statement) {
  static int runs = 0;
  SpawnOptions so;
  so.argv = {VSC_BINARY, "sql",       "--director", director,       "--key-file",
             key_file,   "--execute", statement,    "--timeout-ms", "3000"};
  so.log_path = dir + "/sql-" + std::to_string(++runs) + ".out";
  auto proc = Subprocess::Spawn(so);
  if (!proc.ok()) return {-1, proc.status().ToString()};
  auto code = proc->Wait(10s);
  return {code.value_or(-1), ReadFile(so.log_path)};
}

// A TCP port on 127.0.0.1 that nothing listens on (bound once, then released).
// A TCP port that refuses connections for as long as `holder` lives: bound, never listening, so
// that no other process (the tests run beside each other) can take the number meanwhile.
uint16_t ClosedPort(UniqueFd& holder) {
  UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(a);
  if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0 ||
      ::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    ADD_FAILURE() << "cannot bind a probe socket";
    return 0;
  }
  holder = std::move(fd);
  return ntohs(a.sin_port);
}

using IdentityTest = ClusterTest;

TEST_F(IdentityTest, ADuplicateIdIsRefusedTheHolderKeepsServingAndARestartedHolderIsWelcome) {
  ASSERT_NO_FATAL_FAILURE(StartCluster());
  const uint16_t holder_port = cluster_->server_lookup_port(0);
  auto dup =
      SpawnRealServer(work_dir_, "dup", "rs1", cluster_->key_file(), cluster_->control_port());
  ASSERT_TRUE(dup.ok()) << dup.status().ToString();
  const std::optional<int> code = dup->Wait(10s);
  const std::string dup_log = ReadFile(work_dir_ + "/dup.log");
  ASSERT_TRUE(code.has_value()) << "the second rs1 did not give up:\n" << dup_log;
  EXPECT_EQ(*code, 1);
  EXPECT_NE(dup_log.find("refused the registration: server id 'rs1' is in use by another live "
                         "server"),
            npos)
      << dup_log;
  EXPECT_NE(dup_log.find("exiting with code 1"), npos) << dup_log;
  EXPECT_TRUE(WaitForText(work_dir_ + "/director.log", "refused: server id 'rs1' is in use", 2s));
  EXPECT_EQ(Metric("vsc_registration_refusals_total{reason=\"duplicate_id\"}"), 1);

  // The holder kept its id, its address and its share of the traffic.
  json status = AdminStatus();
  const json* holder = FindServer(status, 0, "rs1");
  ASSERT_NE(holder, nullptr);
  EXPECT_EQ((*holder)["address"], "127.0.0.1:" + std::to_string(holder_port));
  EXPECT_TRUE(WaitForState("rs1", "ACTIVE", 2s));
  std::vector<int> per_server = UdpRoundTrips(30, 31);
  for (int i = 0; i < kServers; ++i) EXPECT_EQ(per_server[i], 10) << cluster_->server_id(i);
  EXPECT_TRUE(cluster_->server_running(0));

  // The holder crashes (its session closes at once): a new process with its id is welcome.
  ASSERT_TRUE(cluster_->SignalServer(0, SIGKILL).ok());
  ASSERT_TRUE(WaitForState("rs1", "DOWN", 2s));
  auto again =
      SpawnRealServer(work_dir_, "again", "rs1", cluster_->key_file(), cluster_->control_port());
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  auto ready = WaitForFile(work_dir_ + "/again.ready", 10s, &*again);
  ASSERT_TRUE(ready.ok()) << ready.status().ToString();
  const uint16_t again_port = json::parse(*ready).at("lookup_port");
  ASSERT_TRUE(WaitForState("rs1", "ACTIVE", 10s)) << ReadFile(work_dir_ + "/again.log");
  status = AdminStatus();
  holder = FindServer(status, 0, "rs1");
  ASSERT_NE(holder, nullptr);
  EXPECT_EQ((*holder)["address"], "127.0.0.1:" + std::to_string(again_port));
  EXPECT_TRUE(again->running());
  EXPECT_EQ(Metric("vsc_registration_refusals_total{reason=\"duplicate_id\"}"), 1);
}

TEST_F(IdentityTest, AnAgentWithTheWrongKeySaysSoAndTheDirectorCountsAndLogsIt) {
  ASSERT_NO_FATAL_FAILURE(StartCluster());
  const double unauthenticated = Metric("vsc_control_dropped_total{reason=\"unauthenticated\"}");
  auto rs = SpawnRealServer(work_dir_, "wrongkey", "rs9", WriteWrongKey(work_dir_),
                            cluster_->control_port());
  ASSERT_TRUE(rs.ok()) << rs.status().ToString();
  const std::string log = work_dir_ + "/wrongkey.log";
  EXPECT_TRUE(WaitForText(log, "authentication failed: wrong cluster key?", 10s)) << ReadFile(log);
  EXPECT_NE(
      ReadFile(log).find("(director 127.0.0.1:" + std::to_string(cluster_->control_port()) + ")"),
      npos)
      << ReadFile(log);
  EXPECT_TRUE(WaitForText(work_dir_ + "/director.log",
                          "authentication failed (wrong cluster key?); answered auth-failed", 2s));
  EXPECT_GE(Metric("vsc_control_dropped_total{reason=\"unauthenticated\"}"), unauthenticated + 1);
  EXPECT_EQ(State("rs9"), "");
  EXPECT_TRUE(rs->running()) << "it should keep trying (the director's key may be the wrong one)";
}

// Reads go over the write port too (the director relays them to a replica), so a wrong key is
// named for both: the director answers the auth-failed frame before it closes.
TEST_F(IdentityTest, SqlWithTheWrongKeySaysSoForWritesAndReads) {
  ASSERT_NO_FATAL_FAILURE(
      StartCluster([](bench::LocalClusterOptions& o) { o.replication = true; }));
  const std::string director = "127.0.0.1:" + std::to_string(cluster_->write_port()) + "," +
                               std::to_string(cluster_->sql_port());
  const std::string wrong = WriteWrongKey(work_dir_);
  auto [wcode, wout] =
      RunSql(work_dir_, director, wrong, "UPDATE resources SET size = 7 WHERE id = 1");
  EXPECT_EQ(wcode, 1) << wout;
  EXPECT_NE(wout.find("authentication failed: wrong cluster key?"), npos) << wout;
  EXPECT_TRUE(WaitForText(work_dir_ + "/director.log", "write session from 127.0.0.1:", 2s));
  auto [rcode, rout] =
      RunSql(work_dir_, director, wrong, "SELECT node FROM resources WHERE id = 1");
  EXPECT_EQ(rcode, 1) << rout;
  EXPECT_NE(rout.find("authentication failed: wrong cluster key?"), npos) << rout;
  // With the right key both work: the messages above are about the key.
  auto [ok_code, ok_out] =
      RunSql(work_dir_, director, cluster_->key_file(), "SELECT node FROM resources WHERE id = 1");
  EXPECT_EQ(ok_code, 0) << ok_out;
}

TEST(AgentMessagesTest, AnAgentThatCannotReachTheDirectorSaysSoWithItsAddressAndKeepsSaying) {
  const std::string dir = MakeTempDir("vsc-identity");
  UniqueFd holder;
  const uint16_t port = ClosedPort(holder);
  ASSERT_NE(port, 0);
  auto rs = SpawnRealServer(dir, "lonely", "rs1", WriteWrongKey(dir), port);
  ASSERT_TRUE(rs.ok()) << rs.status().ToString();
  const std::string log = dir + "/lonely.log";
  const std::string said = "cannot connect to the director at 127.0.0.1:" + std::to_string(port) +
                           ": Connection refused";
  EXPECT_TRUE(WaitForText(log, said, 10s)) << ReadFile(log);
  // Every attempt fails the same way; the next report (at most one per 5 s) counts them.
  EXPECT_TRUE(WaitForText(log, "more attempts failed the same way since the last report", 8s))
      << ReadFile(log);
  EXPECT_TRUE(rs->running());
  if (!HasFailure()) fs::remove_all(dir);
}

}  // namespace
}  // namespace vsc::integration
