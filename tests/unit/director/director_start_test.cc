// Director::Start's order (issue 6, "a start-up error changes nothing on disk"): validate, lock
// the replication log, bind every socket, and only then write (the log's new epoch, the
// after_bind hook that writes the admin token file, the ready file). Real sockets on 127.0.0.1,
// a real log in a temporary directory.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <asio.hpp>
#include <filesystem>
#include <fstream>

#include "common/clock.h"
#include "director/director.h"
#include "replication/log.h"
#include "support/dir_listing.h"
#include "support/temp_dir.h"
#include "support/test_key.h"

namespace vsc::director {
namespace {

namespace fs = std::filesystem;

using test_support::TestKey;

void MakeSchemaDb(const std::string& path) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(
      sqlite3_exec(db, "CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT)", nullptr, nullptr, nullptr),
      SQLITE_OK);
  sqlite3_close(db);
}

// Every port 0 (any free one), replication on with its log in `dir`.
DirectorConfig Config(const std::string& dir, const std::string& schema_db) {
  DirectorConfig c;
  c.lookup_port = c.control_port = c.heartbeat_port = c.admin_port = 0;
  c.write_port = c.sql_port = c.http_port = c.ring_port = 0;
  c.workers = 1;
  c.log_file = dir + "/director-log.db";
  c.schema_db = schema_db;
  return c;
}

uint64_t LogEpoch(const std::string& path) {
  auto log = replication::ReplicationLog::OpenReader(path);
  EXPECT_TRUE(log.ok()) << log.status().ToString();
  return log.ok() ? (*log)->epoch() : 0;
}

class DirectorStartTest : public ::testing::Test {
 protected:
  void SetUp() override {
    schema_db_ = schema_dir_.File("schema.db");
    ASSERT_NO_FATAL_FAILURE(MakeSchemaDb(schema_db_));
  }

  test_support::TempDir schema_dir_;
  std::string schema_db_;
  RealClock clock_;
};

TEST_F(DirectorStartTest, WritesOnlyAfterEverySocketIsBound) {
  test_support::TempDir dir;
  Director d(Config(dir.path(), schema_db_), TestKey(), "token", clock_);
  int calls = 0;
  Status s = d.Start([&] {
    ++calls;
    EXPECT_NE(d.lookup_port(), 0);
    EXPECT_NE(d.control_port(), 0);
    EXPECT_NE(d.heartbeat_port(), 0);
    EXPECT_NE(d.admin_port(), 0);
    EXPECT_NE(d.write_port(), 0);
    EXPECT_NE(d.sql_port(), 0);
    EXPECT_TRUE(fs::exists(dir.File("director-log.db")));
    return Status::Ok();
  });
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(calls, 1);
  EXPECT_TRUE(fs::exists(dir.File("director-log.db.vsc-lock")));
}

TEST_F(DirectorStartTest, SecondDirectorOnTheSameLogIsRefusedBeforeItWritesAnything) {
  test_support::TempDir dir;
  Director first(Config(dir.path(), schema_db_), TestKey(), "token", clock_);
  ASSERT_TRUE(first.Start().ok());
  const uint64_t epoch = LogEpoch(dir.File("director-log.db"));
  ASSERT_GT(epoch, 0u);

  Director second(Config(dir.path(), schema_db_), TestKey(), "token", clock_);
  bool wrote = false;
  Status s = second.Start([&] {
    wrote = true;
    return Status::Ok();
  });
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), Code::kFailedPrecondition) << s.ToString();
  EXPECT_NE(s.message().find("replication log " + dir.File("director-log.db") +
                             " is in use by process " + std::to_string(::getpid())),
            std::string::npos)
      << s.ToString();
  EXPECT_NE(s.message().find("another director"), std::string::npos) << s.ToString();
  EXPECT_FALSE(wrote) << "the token file would have been written";
  EXPECT_EQ(LogEpoch(dir.File("director-log.db")), epoch) << "the second director bumped the epoch";
  EXPECT_NE(first.admin_port(), 0);
}

// Which port of the director a test occupies, and whether that port is UDP.
struct Occupied {
  const char* name;
  uint16_t DirectorConfig::*port;
  bool udp;
};
void PrintTo(const Occupied& o, std::ostream* os) { *os << o.name << " port"; }

class DirectorBindFailureTest : public DirectorStartTest,
                                public ::testing::WithParamInterface<Occupied> {};

TEST_P(DirectorBindFailureTest, LeavesTheDiskAsItWas) {
  asio::io_context io;
  const asio::ip::address_v4 lo = asio::ip::make_address_v4("127.0.0.1");
  asio::ip::tcp::acceptor tcp(io, asio::ip::tcp::endpoint(lo, 0));
  asio::ip::udp::socket udp(io, asio::ip::udp::endpoint(lo, 0));
  const uint16_t taken = GetParam().udp ? udp.local_endpoint().port() : tcp.local_endpoint().port();

  test_support::TempDir dir;
  { std::ofstream(dir.File("keep")) << "x"; }
  DirectorConfig c = Config(dir.path(), schema_db_);
  c.*(GetParam().port) = taken;
  c.ready_file = dir.File("director.ready");
  Director d(c, TestKey(), "token", clock_);
  bool wrote = false;
  Status s = d.Start([&] {
    wrote = true;
    return Status::Ok();
  });
  ASSERT_FALSE(s.ok()) << GetParam().name << " port " << taken << " was taken";
  EXPECT_EQ(s.code(), Code::kIo) << s.ToString();
  EXPECT_NE(s.message().find(std::to_string(taken)), std::string::npos) << s.ToString();
  EXPECT_FALSE(wrote);
  EXPECT_EQ(test_support::SortedListing(dir.path()), std::vector<std::string>{"keep"})
      << "no log, no lock file, no ready file after a failed start";

  // The same directory starts cleanly once the port is free.
  tcp.close();
  udp.close();
  Director again(Config(dir.path(), schema_db_), TestKey(), "token", clock_);
  Status ok = again.Start();
  EXPECT_TRUE(ok.ok()) << ok.ToString();
}

INSTANTIATE_TEST_SUITE_P(
    EveryPort, DirectorBindFailureTest,
    ::testing::Values(Occupied{"lookup", &DirectorConfig::lookup_port, false},
                      Occupied{"control", &DirectorConfig::control_port, false},
                      Occupied{"heartbeat", &DirectorConfig::heartbeat_port, true},
                      Occupied{"admin", &DirectorConfig::admin_port, false},
                      Occupied{"write", &DirectorConfig::write_port, false},
                      Occupied{"sql", &DirectorConfig::sql_port, true},
                      Occupied{"http", &DirectorConfig::http_port, false},
                      Occupied{"ring", &DirectorConfig::ring_port, false}),
    [](const auto& info) { return std::string(info.param.name); });

TEST_F(DirectorStartTest, BadSchemaDbCreatesNoLog) {
  test_support::TempDir dir;
  { std::ofstream(dir.File("not-sqlite.db")) << "this is not a database"; }
  Director d(Config(dir.path(), dir.File("not-sqlite.db")), TestKey(), "token", clock_);
  Status s = d.Start();
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("schema_db"), std::string::npos) << s.ToString();
  EXPECT_FALSE(fs::exists(dir.File("director-log.db")));
}

TEST_F(DirectorStartTest, MissingSchemaDbIsRefusedBeforeBinding) {
  test_support::TempDir dir;
  Director d(Config(dir.path(), dir.File("typo.db")), TestKey(), "token", clock_);
  Status s = d.Start();
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), Code::kNotFound) << s.ToString();
  EXPECT_NE(s.message().find(dir.File("typo.db")), std::string::npos) << s.ToString();
  EXPECT_TRUE(test_support::SortedListing(dir.path()).empty());
}

}  // namespace
}  // namespace vsc::director
