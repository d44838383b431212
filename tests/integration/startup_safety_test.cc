// Operator mistakes at start-up (issue 6), made the way a new user would, with real processes:
// two real servers on one --db file, a second director in the same directory (with free ports,
// and with a port that is taken), the admin token across restarts with the defaults, and a
// mistyped --db. Each refusal must name the problem and the fix, leave the running cluster
// serving, and change nothing on disk.
#include <sys/stat.h>

#include <asio.hpp>
#include <filesystem>

#include "client/sql_client.h"
#include "common/subprocess.h"
#include "integration/cluster_harness.h"
#include "proto/cluster_key.h"
#include "replication/log.h"
#include "support/dir_listing.h"

namespace vsc::integration {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

uint64_t LogEpoch(const std::string& path) {
  auto log = replication::ReplicationLog::OpenReader(path);
  EXPECT_TRUE(log.ok()) << log.status().ToString();
  return log.ok() ? (*log)->epoch() : 0;
}

// Everything on port 0, so that only the lock can stop a second director.
std::vector<std::string> DirectorArgs(const std::string& key_file) {
  return {"director", "--key-file",       key_file, "--lookup-port", "0", "--control-port",
          "0",        "--heartbeat-port", "0",      "--admin-port",  "0", "--write-port",
          "0",        "--sql-port",       "0",      "--workers",     "1",
          "--http-port", "0"};
}

// Replaces the value that follows `flag` in `args`.
void SetFlag(std::vector<std::string>& args, const std::string& flag, const std::string& value) {
  auto at = std::find(args.begin(), args.end(), flag);
  ASSERT_TRUE(at != args.end() && at + 1 != args.end()) << flag;
  *(at + 1) = value;
}

class StartupSafetyTest : public ClusterTest {
 protected:
  void StartReplicatedCluster() {
    ASSERT_NO_FATAL_FAILURE(
        StartCluster([](bench::LocalClusterOptions& o) { o.replication = true; }));
  }

  std::string TokenFile() const { return work_dir_ + "/director-admin.token"; }

  // `vsc adm verify`: every replica's content hash at one seq; exit 0 when all agree.
  void ExpectVerifyOk() {
    auto [code, out] = RunAdm(work_dir_, cluster_->admin_port(), TokenFile(), {"verify"});
    EXPECT_EQ(code, 0) << out;
  }

  void ExpectWriteOk() {
    auto key = proto::ClusterKey::FromFile(cluster_->key_file());
    ASSERT_TRUE(key.ok()) << key.status().ToString();
    auto w = client::WriteClient::Connect("127.0.0.1", cluster_->write_port(), *key, 10s);
    ASSERT_TRUE(w.ok()) << w.status().ToString();
    auto r = w->Execute({client::MakeStatement("UPDATE resources SET size = size + 1 WHERE id = ?1",
                                               {client::SqlInt(7)})});
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_TRUE(r->ok()) << r->error();
    EXPECT_EQ(r->rows_changed(), 1);
  }
};

// Issue 6.1: the README's recipe used to start every server with --db resources.db.
TEST_F(StartupSafetyTest, SecondRealServerOnTheSameDbRefusesAndTheFirstKeepsServing) {
  ASSERT_NO_FATAL_FAILURE(StartReplicatedCluster());
  const std::string db = cluster_->server_db(0);
  auto [code, out] =
      RunVsc({"realserver", "--id", "rs9", "--key-file", cluster_->key_file(), "--director",
              "127.0.0.1:" + std::to_string(cluster_->control_port()), "--db", db},
             work_dir_ + "/rs9.out", 10s);
  EXPECT_EQ(code, 1) << out;
  EXPECT_TRUE(Contains(out, "replica database " + db + " is in use by process " +
                                std::to_string(cluster_->server_pid(0))))
      << out;
  EXPECT_TRUE(Contains(out, "its own copy")) << out;
  EXPECT_EQ(State("rs9"), "");
  EXPECT_EQ(State("rs1"), "ACTIVE");
  ASSERT_NO_FATAL_FAILURE(ExpectWriteOk());
  ExpectVerifyOk();
}

// Issue 6.2: a second director in the same directory used to bump the log's epoch and
// overwrite the token file, then fail (or, on free ports, run beside the first).
TEST_F(StartupSafetyTest, SecondDirectorInTheSameDirectoryRefusesAndChangesNothing) {
  ASSERT_NO_FATAL_FAILURE(StartReplicatedCluster());
  const std::string log = work_dir_ + "/director-log.db";
  const std::string token = ReadFile(TokenFile());
  const uint64_t epoch = LogEpoch(log);
  ASSERT_FALSE(token.empty());

  std::vector<std::string> args = DirectorArgs(cluster_->key_file());
  args.insert(args.end(), {"--schema-db", SharedDbPath()});  // log and token: the defaults
  auto [code, out] = RunVsc(args, work_dir_ + "/director2.out", 10s, work_dir_);
  EXPECT_EQ(code, 1) << out;
  EXPECT_TRUE(Contains(out, "replication log director-log.db is in use by process " +
                                std::to_string(cluster_->director_pid())))
      << out;
  EXPECT_EQ(ReadFile(TokenFile()), token) << "the admin token file was rewritten";
  EXPECT_EQ(LogEpoch(log), epoch) << "the log's epoch was bumped";
  auto [adm, listing] = RunAdm(work_dir_, cluster_->admin_port(), TokenFile(), {"list"});
  EXPECT_EQ(adm, 0) << listing;
  ASSERT_NO_FATAL_FAILURE(ExpectWriteOk());
}

// Issue 6.2, general rule: a start-up that fails to bind leaves the disk as it was.
TEST_F(StartupSafetyTest, DirectorThatCannotBindWritesNothing) {
  ASSERT_NO_FATAL_FAILURE(StartReplicatedCluster());
  const std::string dir = work_dir_ + "/second";
  fs::create_directories(dir);
  std::vector<std::string> args = DirectorArgs(cluster_->key_file());
  args.insert(args.end(), {"--schema-db", SharedDbPath()});
  SetFlag(args, "--admin-port", std::to_string(cluster_->admin_port()));  // the first one's
  auto [code, out] = RunVsc(args, work_dir_ + "/director2.out", 10s, dir);
  EXPECT_EQ(code, 1) << out;
  EXPECT_TRUE(Contains(out, "admin API")) << out;
  EXPECT_TRUE(Contains(out, std::to_string(cluster_->admin_port()))) << out;
  EXPECT_EQ(test_support::SortedListing(dir), std::vector<std::string>{})
      << "no log, lock, token or ready file";
}

// Issue 6.4: with the defaults (no admin_token_file) the token used to change at every start.
TEST_F(StartupSafetyTest, DefaultAdminTokenIsKeptAcrossRestarts) {
  work_dir_ = MakeTempDir("vsc-startup");
  const std::string ready = work_dir_ + "/director.ready";
  std::vector<std::string> args = DirectorArgs("");
  args.erase(args.begin() + 1, args.begin() + 3);  // no key file: --insecure
  args.insert(args.end(), {"--insecure", "--ready-file", ready});
  std::string tokens[2];
  for (int run = 0; run < 2; ++run) {
    SpawnOptions so;
    so.argv = {VSC_BINARY};
    so.argv.insert(so.argv.end(), args.begin(), args.end());
    so.log_path = work_dir_ + "/director-" + std::to_string(run) + ".out";
    so.cwd = work_dir_;
    ::unlink(ready.c_str());
    auto proc = Subprocess::Spawn(so);
    ASSERT_TRUE(proc.ok()) << proc.status().ToString();
    auto text = WaitForFile(ready, 10s, &*proc);
    ASSERT_TRUE(text.ok()) << text.status().ToString() << ": " << ReadFile(so.log_path);
    tokens[run] = ReadFile(work_dir_ + "/director-admin.token");
    ASSERT_FALSE(tokens[run].empty());
    struct stat st {};
    ASSERT_EQ(::stat((work_dir_ + "/director-admin.token").c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600u);
    const auto j = nlohmann::json::parse(*text);
    auto [adm, listing] = RunVsc(
        {"adm", "--admin", "127.0.0.1:" + std::to_string(j.at("admin_port").get<int>()), "list"},
        work_dir_ + "/adm-" + std::to_string(run) + ".out", 10s, work_dir_);
    EXPECT_EQ(adm, 0) << listing;
    EXPECT_EQ(proc->Terminate(5s), 0);
  }
  EXPECT_EQ(tokens[1], tokens[0]) << "the admin token changed across a restart";
}

// Issue 6.7: a mistyped --db used to start an empty database in silence.
TEST_F(StartupSafetyTest, MissingDbIsRefusedAndNotCreated) {
  work_dir_ = MakeTempDir("vsc-startup");
  const std::string db = work_dir_ + "/resuorces.db";
  auto [code, out] =
      RunVsc({"realserver", "--id", "rs1", "--insecure", "--director", "127.0.0.1:9", "--db", db},
             work_dir_ + "/rs1.out", 10s);
  EXPECT_EQ(code, 1) << out;
  EXPECT_TRUE(Contains(out, "database " + db + " does not exist")) << out;
  EXPECT_TRUE(Contains(out, "--create-db")) << out;
  EXPECT_EQ(test_support::SortedListing(work_dir_), std::vector<std::string>{"rs1.out"});
}

// Issue 6: a real server that cannot bind used to open its database as a replica first,
// writing its replication state (the _vsc_replica table, a WAL) into a file it then did not
// serve. It binds every socket first now: the file stays byte for byte as it was.
TEST_F(StartupSafetyTest, RealServerThatCannotBindLeavesItsDatabaseUntouched) {
  work_dir_ = MakeTempDir("vsc-startup");
  const std::string db = work_dir_ + "/rs1.db";
  auto [built, built_out] =
      RunVsc({"loaddb", "--out", db, "--records", "100"}, work_dir_ + "/loaddb.out", 30s);
  ASSERT_EQ(built, 0) << built_out;
  const std::string before = ReadFile(db);
  ASSERT_FALSE(before.empty());
  // A port held without SO_REUSEPORT, so the server's own reuse-port sockets cannot share it.
  asio::io_context io;
  asio::ip::tcp::acceptor taken(io, {asio::ip::make_address_v4("127.0.0.1"), 0});
  const std::string port = std::to_string(taken.local_endpoint().port());
  auto [code, out] = RunVsc({"realserver", "--id", "rs1", "--insecure", "--director", "127.0.0.1:9",
                             "--db", db, "--http-port", port},
                            work_dir_ + "/rs1.out", 10s);
  EXPECT_EQ(code, 1) << out;
  EXPECT_TRUE(Contains(out, port)) << out;
  EXPECT_EQ(ReadFile(db), before) << "the failed start wrote into the database";
  EXPECT_EQ(test_support::SortedListing(work_dir_),
            (std::vector<std::string>{"loaddb.out", "rs1.db", "rs1.out"}));
}

// Issue 6.7, the deliberate path: --create-db starts empty and a peer's snapshot fills it.
TEST_F(StartupSafetyTest, CreateDbStartsEmptyAndIsFilledByASnapshot) {
  ASSERT_NO_FATAL_FAILURE(StartReplicatedCluster());
  const std::string db = work_dir_ + "/rs9.db";
  SpawnOptions so;
  so.argv = {VSC_BINARY,   "realserver",
             "--id",       "rs9",
             "--key-file", cluster_->key_file(),
             "--director", "127.0.0.1:" + std::to_string(cluster_->control_port()),
             "--db",       db,
             "--create-db"};
  so.log_path = work_dir_ + "/rs9.log";
  auto proc = Subprocess::Spawn(so);
  ASSERT_TRUE(proc.ok()) << proc.status().ToString();
  ASSERT_TRUE(WaitForState("rs9", "ACTIVE", 30s)) << ReadFile(so.log_path);
  ASSERT_NO_FATAL_FAILURE(ExpectWriteOk());
  ExpectVerifyOk();
  auto [code, out] = RunAdm(work_dir_, cluster_->admin_port(), TokenFile(), {"verify"});
  EXPECT_TRUE(Contains(out, "rs9")) << out;
  proc->Terminate(5s);
}

}  // namespace
}  // namespace vsc::integration
