// RealServerConfig::Bind: every key reaches its own field, the printed configuration loads back,
// and DirectorAddresses() combines each `director` with `control_port` unless it names a port.
#include "realserver/realserver_config.h"

#include <gtest/gtest.h>

namespace vsc::realserver {
namespace {

constexpr char kEveryKey[] = R"(
[realserver]
id = "rs-7"
director = "10.0.0.9"
control_port = 17100
listen = "10.0.0.10"
lookup_port = 18000
http_port = 18001
sql_port = 18002
db = "/var/lib/vsc/rs7.db"
create_db = true
synchronous = "FULL"
apply_batch = 128
snapshot_timeout_ms = 4500
weight = 9
workers = 4
key_file = "/etc/vsc/key"
insecure = true
trusted_forwarders = "10.0.0.1,10.0.0.2"
log_level = "warn"
ready_file = "/run/vsc/rs7.ready"
)";

void ExpectEveryKeySet(const RealServerConfig& c) {
  EXPECT_EQ(c.id, "rs-7");
  EXPECT_EQ(c.director, std::vector<std::string>{"10.0.0.9"});
  EXPECT_EQ(c.control_port, 17100);
  EXPECT_EQ(c.listen, "10.0.0.10");
  EXPECT_EQ(c.lookup_port, 18000);
  EXPECT_EQ(c.http_port, 18001);
  EXPECT_EQ(c.sql_port, 18002);
  EXPECT_EQ(c.db, "/var/lib/vsc/rs7.db");
  EXPECT_TRUE(c.create_db);
  EXPECT_EQ(c.synchronous, "FULL");
  EXPECT_EQ(c.apply_batch, 128u);
  EXPECT_EQ(c.snapshot_timeout_ms, 4500u);
  EXPECT_EQ(c.weight, 9u);
  EXPECT_EQ(c.workers, 4u);
  EXPECT_EQ(c.key_file, "/etc/vsc/key");
  EXPECT_TRUE(c.insecure);
  EXPECT_EQ(c.trusted_forwarders, "10.0.0.1,10.0.0.2");
  EXPECT_EQ(c.log_level, "warn");
  EXPECT_EQ(c.ready_file, "/run/vsc/rs7.ready");
}

TEST(RealServerConfigTest, EveryKeySetsItsOwnField) {
  RealServerConfig c;
  ConfigTable t("realserver");
  c.Bind(t);
  ASSERT_TRUE(t.LoadTomlText(kEveryKey, "test.toml").ok());
  ExpectEveryKeySet(c);
}

TEST(RealServerConfigTest, ThePrintedConfigurationLoadsBack) {
  RealServerConfig first;
  ConfigTable t1("realserver");
  first.Bind(t1);
  ASSERT_TRUE(t1.LoadTomlText(kEveryKey, "test.toml").ok());
  RealServerConfig second;
  ConfigTable t2("realserver");
  second.Bind(t2);
  const Status s = t2.LoadTomlText(t1.ToToml(), "printed");
  ASSERT_TRUE(s.ok()) << s.ToString() << "\n" << t1.ToToml();
  ExpectEveryKeySet(second);
}

TEST(RealServerConfigTest, DirectorAddressTakesThePortFromDirectorWhenItNamesOne) {
  RealServerConfig c;
  EXPECT_EQ(c.DirectorAddresses(), std::vector<std::string>{"127.0.0.1:7100"});
  c.control_port = 9100;
  EXPECT_EQ(c.DirectorAddresses(), std::vector<std::string>{"127.0.0.1:9100"});
  c.director = {"10.1.2.3:7777"};  // the older HOST:PORT form wins over control_port
  EXPECT_EQ(c.DirectorAddresses(), std::vector<std::string>{"10.1.2.3:7777"});
}

TEST(RealServerConfigTest, SeveralDirectorsComeFromATomlListInTheirOrder) {
  RealServerConfig c;
  ConfigTable t("realserver");
  c.Bind(t);
  const Status s = t.LoadTomlText(
      "[realserver]\nid = \"rs1\"\ncontrol_port = 7200\n"
      "director = [\"10.0.0.11\", \"10.0.0.12:7300\"]\n",
      "test");
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(c.DirectorAddresses(), (std::vector<std::string>{"10.0.0.11:7200", "10.0.0.12:7300"}));
}

}  // namespace
}  // namespace vsc::realserver
