// The saved services table: every successful commit is on disk and loads back equal; a failed
// write refuses the change before the runtime sees it; a failed commit or write leaves the old
// file byte for byte.
#include "director/service_store.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "director/director_config.h"
#include "fake_service_editor.h"
#include "vservice/ipvsadm_rules.h"
#include "vservice/service_toml.h"

namespace vsc::director {
namespace {

namespace fs = std::filesystem;

std::string Read(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

vservice::VirtualServiceTable Table(const std::string& rules) {
  vservice::VirtualServiceTable t;
  EXPECT_TRUE(vservice::RestoreRules(t, rules).ok());
  return t;
}

class ServiceStoreTest : public ::testing::Test {
 protected:
  ServiceStoreTest() {
    dir_ = fs::temp_directory_path() /
           ("vsc-service-store-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  ~ServiceStoreTest() override { fs::remove_all(dir_); }

  fs::path dir_;
  FakeServiceEditor inner_;
};

TEST_F(ServiceStoreTest, EveryCommitIsSavedAndLoadsBackEqual) {
  const std::string path = (dir_ / "services.toml").string();
  SavingServiceEditor editor(inner_, path);
  auto loaded = LoadSavedServices(path);
  ASSERT_TRUE(loaded.ok());
  EXPECT_FALSE(loaded->has_value()) << "no file yet: nothing saved";
  vservice::VirtualServiceTable t =
      Table("-A -t 10.0.0.1:80 -s rr\n-a -t 10.0.0.1:80 -r 192.168.1.11:80 -m -w 3\n");
  vservice::DestConfig d = t.services().begin()->second.dests.begin()->second;
  d.check = vservice::DefaultCheck(vservice::CheckType::kTcp);
  d.agent_id = "rs1";
  ASSERT_TRUE(
      t.EditDest(t.services().begin()->first, t.services().begin()->second.dests.begin()->first, d)
          .ok());
  ASSERT_TRUE(editor.Commit(t).ok());
  loaded = LoadSavedServices(path);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  ASSERT_TRUE(loaded->has_value());
  EXPECT_TRUE(**loaded == t) << Read(path);
  EXPECT_FALSE(fs::exists(path + ".tmp"));
  ASSERT_TRUE(editor.Commit(vservice::VirtualServiceTable()).ok());
  EXPECT_TRUE(LoadSavedServices(path)->value().services().empty());
}

TEST_F(ServiceStoreTest, AFailedCommitLeavesTheOldFile) {
  const std::string path = (dir_ / "services.toml").string();
  SavingServiceEditor editor(inner_, path);
  ASSERT_TRUE(editor.Commit(Table("-A -t 10.0.0.1:80 -s rr\n")).ok());
  const std::string before = Read(path);
  inner_.fail_next = IoError("bind 10.0.0.2:80: Address already in use");
  EXPECT_FALSE(editor.Commit(Table("-A -t 10.0.0.2:80 -s rr\n")).ok());
  EXPECT_EQ(Read(path), before);
  EXPECT_FALSE(fs::exists(path + ".tmp"));
}

TEST_F(ServiceStoreTest, AFailedWriteRefusesTheChangeBeforeTheRuntimeSeesIt) {
  const std::string path = (dir_ / "services.toml").string();
  SavingServiceEditor editor(inner_, path);
  ASSERT_TRUE(editor.Commit(Table("-A -t 10.0.0.1:80 -s rr\n")).ok());
  const std::string before = Read(path);
  const int commits = inner_.commits;
  fs::create_directory(path + ".tmp");  // the temporary file cannot be created
  auto r = editor.Commit(Table("-A -t 10.0.0.2:80 -s rr\n"));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("nothing changed"), std::string::npos);
  EXPECT_EQ(inner_.commits, commits) << "the runtime was changed although the save failed";
  EXPECT_EQ(Read(path), before);
  EXPECT_EQ(vservice::SaveRules(editor.table()), "-A -t 10.0.0.1:80 -s rr\n");
}

TEST_F(ServiceStoreTest, AMalformedSavedFileIsAnErrorNamingIt) {
  const std::string path = (dir_ / "services.toml").string();
  std::ofstream(path) << "[[service]]\nprotocol = \"tcp\"\n";
  auto loaded = LoadSavedServices(path);
  ASSERT_FALSE(loaded.ok());
  EXPECT_NE(loaded.status().message().find(path), std::string::npos);
  EXPECT_NE(loaded.status().message().find("delete it"), std::string::npos);
}

constexpr char kConfig[] = R"([director]
listen = "127.0.0.1"

[[service]]
protocol = "tcp"
address = "10.0.0.1:80"
lb_algo = "rr"
[[service.server]]
address = "192.168.1.11:80"
weight = 2
)";

// The saved table wins over the configuration at start-up (the operator's last changes
// survive a restart); without one, the configuration's [[service]] tables are the table.
TEST_F(ServiceStoreTest, StartupPrefersTheSavedTable) {
  const std::string path = (dir_ / "services.toml").string();
  auto first = StartupServices(path, kConfig, "director.toml");
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(vservice::SaveRules(*first),
            "-A -t 10.0.0.1:80 -s rr\n-a -t 10.0.0.1:80 -r 192.168.1.11:80 -m -w 2\n");
  SavingServiceEditor editor(inner_, path);
  ASSERT_TRUE(editor.Commit(Table("-A -u 10.0.0.1:53 -s wlc\n")).ok());
  auto again = StartupServices(path, kConfig, "director.toml");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(vservice::SaveRules(*again), "-A -u 10.0.0.1:53 -s wlc\n");
  EXPECT_FALSE(StartupServices(path + ".none", "[[service]]\nprotocol = 1\n", "bad.toml").ok());
}

// The director's configuration file holds its keys and the [[service]] tables side by side,
// with or without a [director] section.
TEST(DirectorConfigServicesTest, ServiceTablesAreLeftToTheServiceLoader) {
  for (const std::string head : {"", "[director]\n"}) {
    DirectorConfig c;
    ConfigTable t("director");
    c.Bind(t);
    const std::string text = head + "services_file = \"/tmp/s.toml\"\n" +
                             "[[service]]\nprotocol = \"tcp\"\naddress = \"10.0.0.1:80\"\n";
    ASSERT_TRUE(t.LoadTomlText(text, "d.toml").ok()) << head;
    EXPECT_EQ(ServicesFilePath(c), "/tmp/s.toml");
  }
  DirectorConfig c;
  ConfigTable t("director");
  c.Bind(t);
  EXPECT_FALSE(t.LoadTomlText("[[servce]]\nprotocol = \"tcp\"\n", "d.toml").ok());
  c.log_file = "/var/lib/vsc/director-log.db";
  EXPECT_EQ(ServicesFilePath(c), "/var/lib/vsc/director-services.toml");
}

// SIGHUP: the configuration's table replaces the running one (and is saved); a file that does
// not load changes nothing.
TEST_F(ServiceStoreTest, ReloadCommitsTheConfigurationsTable) {
  const std::string path = (dir_ / "services.toml").string();
  SavingServiceEditor editor(inner_, path);
  ASSERT_TRUE(editor.Commit(Table("-A -u 10.0.0.1:53 -s wlc\n")).ok());
  auto changes = ReloadServices(editor, kConfig, "director.toml");
  ASSERT_TRUE(changes.ok()) << changes.status().ToString();
  EXPECT_EQ(changes->size(), 2u);  // the UDP service removed, the TCP one added
  EXPECT_EQ(vservice::SaveRules(LoadSavedServices(path)->value()),
            "-A -t 10.0.0.1:80 -s rr\n-a -t 10.0.0.1:80 -r 192.168.1.11:80 -m -w 2\n");
  const int commits = inner_.commits;
  EXPECT_FALSE(ReloadServices(editor, "[[service]]\nlb_algo = \"rr\"\n", "director.toml").ok());
  EXPECT_EQ(inner_.commits, commits);
}

}  // namespace
}  // namespace vsc::director
