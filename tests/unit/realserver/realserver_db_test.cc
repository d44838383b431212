// A real server's database file at start-up (issue 6): a mistyped --db must not create an empty
// database, and two servers must not share one file.
#include <gtest/gtest.h>

#include <filesystem>

#include "common/clock.h"
#include "realserver/realserver.h"
#include "support/temp_dir.h"
#include "support/test_key.h"

namespace vsc::realserver {
namespace {

namespace fs = std::filesystem;

using test_support::TestKey;

RealServerConfig Config(const std::string& db, const std::string& id = "rs1") {
  RealServerConfig c;
  c.id = id;
  c.director = {"127.0.0.1:9"};  // nobody there: the agent keeps trying in the background
  c.db = db;
  return c;
}

TEST(RealServerDbTest, MissingDatabaseIsRefusedWithTheWaysToGetOne) {
  test_support::TempDir dir;
  const std::string db = dir.File("typo.db");
  Status s = CheckDatabaseFile(Config(db));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), Code::kNotFound);
  for (const std::string& part : {db, std::string("--create-db"), std::string("cp resources.db"),
                                  std::string("vsc loaddb")}) {
    EXPECT_NE(s.message().find(part), std::string::npos) << part << " in: " << s.message();
  }
  RealServerConfig create = Config(db);
  create.create_db = true;
  EXPECT_TRUE(CheckDatabaseFile(create).ok());
}

TEST(RealServerDbTest, StartWithAMissingDatabaseCreatesNothing) {
  test_support::TempDir dir;
  RealClock clock;
  RealServer rs(Config(dir.File("typo.db")), TestKey(), clock);
  Status s = rs.Start();
  EXPECT_EQ(s.code(), Code::kNotFound) << s.ToString();
  EXPECT_TRUE(fs::is_empty(dir.path())) << "no database, no lock file";
}

TEST(RealServerDbTest, CreateDbStartsWithAnEmptyDatabase) {
  test_support::TempDir dir;
  RealClock clock;
  RealServerConfig c = Config(dir.File("new.db"));
  c.create_db = true;
  RealServer rs(c, TestKey(), clock);
  Status s = rs.Start();
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_TRUE(fs::exists(dir.File("new.db")));
  EXPECT_EQ(rs.replica()->applied_seq(), 0u);
  rs.Stop();
}

TEST(RealServerDbTest, SecondServerOnTheSameFileIsRefused) {
  test_support::TempDir dir;
  RealClock clock;
  RealServerConfig c = Config(dir.File("shared.db"));
  c.create_db = true;
  RealServer first(c, TestKey(), clock);
  ASSERT_TRUE(first.Start().ok());
  RealServer second(Config(dir.File("shared.db"), "rs2"), TestKey(), clock);
  Status s = second.Start();
  EXPECT_EQ(s.code(), Code::kFailedPrecondition) << s.ToString();
  EXPECT_NE(s.message().find("in use by process"), std::string::npos) << s.ToString();
  EXPECT_NE(first.lookup_port(), 0);
  first.Stop();
}

}  // namespace
}  // namespace vsc::realserver
