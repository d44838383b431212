// DirectorConfig::Bind: every key reaches its own field (a key bound to the wrong field, or two
// keys to one, shows as a field left at its default or holding another key's value), and the
// printed configuration loads back to the same values.
#include "director/director_config.h"

#include <gtest/gtest.h>

#include <functional>

#include "director/default_services.h"
#include "director/director.h"

namespace vsc::director {
namespace {

constexpr char kEveryKey[] = R"(
[director]
listen = "10.0.0.1"
lookup_port = 17000
control_port = 17100
heartbeat_port = 17101
admin_listen = "10.0.0.2"
admin_port = 17200
admin_token_file = "/etc/vsc/token"
key_file = "/etc/vsc/key"
insecure = true
workers = 3
scheduler = "mh"
persistence_timeout_s = 360
persistence_netmask = "255.255.255.0"
heartbeat_interval_ms = 150
silent_after = 3
down_after = 7
mh_table_size = 251
dwlc_reference_ms = 650.5
max_servers = 99
log_level = "debug"
ready_file = "/run/vsc/ready"
write_port = 17300
sql_port = 17301
log_file = "/var/lib/vsc/log.db"
schema_db = "/var/lib/vsc/boot.db"
commit_policy = "majority"
replica_window_entries = 77
replica_window_bytes = 12345
update_queue = 55
request_queue = 66
read_timeout_ms = 2500
log_retain_entries = 4321
log_retain_bytes = 987654
etcd_endpoints = ["http://127.0.0.1:2379", "10.0.0.9:2379"]
cluster_name = "prod"
sequencer_lease_ttl_ms = 6000
etcd_timeout_ms = 700
floating_vip = true
)";

void ExpectEveryKeySet(const DirectorConfig& c) {
  EXPECT_EQ(c.listen, "10.0.0.1");
  EXPECT_EQ(c.lookup_port, 17000);
  EXPECT_EQ(c.control_port, 17100);
  EXPECT_EQ(c.heartbeat_port, 17101);
  EXPECT_EQ(c.admin_listen, "10.0.0.2");
  EXPECT_EQ(c.admin_port, 17200);
  EXPECT_EQ(c.admin_token_file, "/etc/vsc/token");
  EXPECT_EQ(c.key_file, "/etc/vsc/key");
  EXPECT_TRUE(c.insecure);
  EXPECT_EQ(c.workers, 3u);
  EXPECT_EQ(c.scheduler, "mh");
  EXPECT_EQ(c.persistence_timeout_s, 360u);
  EXPECT_EQ(c.persistence_netmask, "255.255.255.0");
  EXPECT_EQ(c.heartbeat_interval_ms, 150u);
  EXPECT_EQ(c.silent_after, 3u);
  EXPECT_EQ(c.down_after, 7u);
  EXPECT_EQ(c.mh_table_size, 251u);
  EXPECT_EQ(c.dwlc_reference_ms, 650.5);
  EXPECT_EQ(c.max_servers, 99u);
  EXPECT_EQ(c.log_level, "debug");
  EXPECT_EQ(c.ready_file, "/run/vsc/ready");
  EXPECT_EQ(c.write_port, 17300);
  EXPECT_EQ(c.sql_port, 17301);
  EXPECT_EQ(c.log_file, "/var/lib/vsc/log.db");
  EXPECT_EQ(c.schema_db, "/var/lib/vsc/boot.db");
  EXPECT_EQ(c.commit_policy, "majority");
  EXPECT_EQ(c.replica_window_entries, 77u);
  EXPECT_EQ(c.replica_window_bytes, 12345);
  EXPECT_EQ(c.update_queue, 55u);
  EXPECT_EQ(c.request_queue, 66u);
  EXPECT_EQ(c.read_timeout_ms, 2500u);
  EXPECT_EQ(c.log_retain_entries, 4321u);
  EXPECT_EQ(c.log_retain_bytes, 987654);
  EXPECT_EQ(c.etcd_endpoints, (std::vector<std::string>{"http://127.0.0.1:2379", "10.0.0.9:2379"}));
  EXPECT_EQ(c.cluster_name, "prod");
  EXPECT_EQ(c.sequencer_lease_ttl_ms, 6000u);
  EXPECT_EQ(c.etcd_timeout_ms, 700u);
  EXPECT_TRUE(c.floating_vip);
}

TEST(DirectorConfigTest, EveryKeySetsItsOwnField) {
  DirectorConfig c;
  ConfigTable t("director");
  c.Bind(t);
  ASSERT_TRUE(t.LoadTomlText(kEveryKey, "test.toml").ok());
  ExpectEveryKeySet(c);
}

TEST(DirectorConfigTest, ThePrintedConfigurationLoadsBack) {
  DirectorConfig first;
  ConfigTable t1("director");
  first.Bind(t1);
  ASSERT_TRUE(t1.LoadTomlText(kEveryKey, "test.toml").ok());
  DirectorConfig second;
  ConfigTable t2("director");
  second.Bind(t2);
  const Status s = t2.LoadTomlText(t1.ToToml(), "printed");
  ASSERT_TRUE(s.ok()) << s.ToString() << "\n" << t1.ToToml();
  ExpectEveryKeySet(second);
}

TEST(DirectorConfigTest, AnUnknownKeyIsRefusedByName) {
  DirectorConfig c;
  ConfigTable t("director");
  c.Bind(t);
  const Status s = t.LoadTomlText("[director]\nheartbeat_interval = 100\n", "typo.toml");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("heartbeat_interval"), std::string::npos) << s.ToString();
  EXPECT_EQ(c.heartbeat_interval_ms, 200u) << "a refused file changed the configuration";
}

// The etcd keys of the director standby (issue 11): bad values are refused with the key named.
TEST(DirectorConfigTest, BadEtcdKeysAreRefusedByName) {
  DirectorConfig good;
  good.etcd_endpoints = {"http://127.0.0.1:2379", "[::1]:2379", "127.0.0.1:2380/"};
  EXPECT_TRUE(ValidateLeaseConfig(good).ok()) << ValidateLeaseConfig(good).ToString();
  struct Case {
    std::function<void(DirectorConfig&)> set;
    const char* named;
  };
  const std::vector<Case> cases = {
      {[](DirectorConfig& c) { c.etcd_endpoints = {"https://127.0.0.1:2379"}; }, "https"},
      {[](DirectorConfig& c) { c.etcd_endpoints = {"127.0.0.1"}; }, "HOST:PORT"},
      {[](DirectorConfig& c) { c.etcd_endpoints = {"127.0.0.1:99999"}; }, "1-65535"},
      {[](DirectorConfig& c) { c.cluster_name = "a/b"; }, "cluster_name"},
      {[](DirectorConfig& c) { c.cluster_name = ""; }, "cluster_name"},
      {[](DirectorConfig& c) { c.sequencer_lease_ttl_ms = 500; }, "sequencer_lease_ttl_ms"},
      {[](DirectorConfig& c) { c.etcd_timeout_ms = 1001; }, "etcd_timeout_ms"},
      {[](DirectorConfig& c) { c.etcd_timeout_ms = 0; }, "etcd_timeout_ms"},
  };
  for (const Case& k : cases) {
    DirectorConfig c;
    k.set(c);
    const Status s = ValidateLeaseConfig(c);
    EXPECT_EQ(s.code(), Code::kInvalidArgument) << k.named;
    EXPECT_NE(s.message().find(k.named), std::string::npos) << s.ToString();
  }
}

// An IPv6 listen address (issue 12): accepted, and the built-in entries' persistence_netmask is
// a prefix length (the IPv4 default meaning the whole address); a dotted mask is refused.
TEST(DirectorConfigTest, AnIpv6ListenTakesAPrefixLengthAsItsPersistenceNetmask) {
  DirectorConfig c;
  c.listen = "::1";
  EXPECT_TRUE(ValidateConfig(c).ok()) << ValidateConfig(c).ToString();
  EXPECT_EQ(*LookupPersistencePrefix(c), 128);
  c.persistence_netmask = "64";
  EXPECT_EQ(*LookupPersistencePrefix(c), 64);
  c.persistence_timeout_s = 300;
  auto table = InitialServiceTable(c, 7000);
  ASSERT_TRUE(table.ok()) << table.status().ToString();
  const auto* udp = table->Find({vservice::Proto::kUdp, *vservice::IpAddress::Parse("::1"), 7000});
  ASSERT_NE(udp, nullptr);
  ASSERT_TRUE(udp->config.persistence.has_value());
  EXPECT_EQ(udp->config.persistence->prefix_len, 64);
  c.persistence_netmask = "255.255.0.0";
  const Status s = ValidateConfig(c);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("prefix length"), std::string::npos) << s.ToString();
  DirectorConfig v4;
  v4.persistence_netmask = "255.255.255.0";
  EXPECT_EQ(*LookupPersistencePrefix(v4), 24);
  v4.listen = "not-an-address";
  EXPECT_NE(ValidateConfig(v4).message().find("IPv4 or IPv6"), std::string::npos);
}

}  // namespace
}  // namespace vsc::director
