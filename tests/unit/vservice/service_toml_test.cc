#include "vservice/service_toml.h"

#include <gtest/gtest.h>

#include "unit/vservice/vservice_test_util.h"

namespace vsc::vservice {
namespace {

using namespace std::chrono_literals;
using testing::Ap;
using testing::Key;

constexpr std::string_view kExample = R"(
[director]
listen = "127.0.0.1"   # the daemon's own section is not the loader's business

[[service]]
protocol = "TCP"
address = "10.0.0.1:80"
lb_algo = "wlc"
persistence_timeout = "6m"
persistence_granularity = "255.255.255.0"
sorry_server = "10.0.0.9:8080"
lb_kind = "NAT"

[service.check]
type = "HTTP_GET"
delay_loop = 2
connect_timeout = "500ms"
retry = 3
path = "/healthz"

[[service.server]]
address = "192.168.1.11:8080"
weight = 3

[[service.server]]
address = "192.168.1.12:8080"
weight = 0
uthreshold = 100
lthreshold = 50
agent = "rs2"
[service.server.check]
status_code = "200-204"
delay_loop = 0.5

[[service]]
protocol = "udp"
address = "[2001:db8::1]:53"
scheduler = "rr"
ops = true
lb_kind = "DR"

[[service.server]]
address = "[2001:db8::11]:53"
)";

TEST(ServiceTomlTest, LoadsServicesServersAndLayeredChecks) {
  auto t = LoadServicesToml(kExample, "example.toml");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  ASSERT_EQ(t->services().size(), 2u);

  const VirtualService* web = t->Find(Key("tcp", "10.0.0.1:80"));
  ASSERT_NE(web, nullptr);
  EXPECT_EQ(web->config.scheduler, "wlc");
  ASSERT_TRUE(web->config.persistence);
  EXPECT_EQ(web->config.persistence->timeout_s, 360u);
  EXPECT_EQ(web->config.persistence->prefix_len, 24);
  EXPECT_EQ(web->config.sorry_server, Ap("10.0.0.9:8080"));
  ASSERT_EQ(web->dests.size(), 2u);

  const DestConfig& a = web->dests.at(Ap("192.168.1.11:8080"));
  EXPECT_EQ(a.method, Method::kNat);
  EXPECT_EQ(a.weight, 3u);
  ASSERT_TRUE(a.check);
  EXPECT_EQ(a.check->type, CheckType::kHttpGet);
  EXPECT_EQ(a.check->delay_loop, 2s);
  EXPECT_EQ(a.check->connect_timeout, 500ms);
  EXPECT_EQ(a.check->retry, 3u);
  EXPECT_EQ(a.check->path, "/healthz");
  EXPECT_EQ(a.check->delay_before_retry, 3s);  // keepalived's HTTP_GET default

  const DestConfig& b = web->dests.at(Ap("192.168.1.12:8080"));
  EXPECT_EQ(b.weight, 0u);
  EXPECT_EQ(b.u_threshold, 100u);
  EXPECT_EQ(b.l_threshold, 50u);
  EXPECT_EQ(b.agent_id, "rs2");
  ASSERT_TRUE(b.check);
  EXPECT_EQ(b.check->path, "/healthz");  // from the service's check
  EXPECT_EQ(b.check->status_min, 200);   // its own
  EXPECT_EQ(b.check->status_max, 204);
  EXPECT_EQ(b.check->delay_loop, 500ms);

  const VirtualService* dns = t->Find(Key("udp", "[2001:db8::1]:53"));
  ASSERT_NE(dns, nullptr);
  EXPECT_EQ(dns->config.scheduler, "rr");
  EXPECT_TRUE(dns->config.one_packet);
  EXPECT_FALSE(dns->config.persistence);
  const DestConfig& d = dns->dests.at(Ap("[2001:db8::11]:53"));
  EXPECT_EQ(d.method, Method::kDr);
  EXPECT_EQ(d.weight, 1u);
  EXPECT_FALSE(d.check);
}

TEST(ServiceTomlTest, NoServicesIsAnEmptyTable) {
  auto t = LoadServicesToml("[director]\nlisten = \"127.0.0.1\"\n", "d.toml");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_TRUE(t->services().empty());
}

std::string ErrorOf(std::string_view text) {
  auto t = LoadServicesToml(text, "x.toml");
  EXPECT_FALSE(t.ok()) << text;
  return t.ok() ? "" : t.status().message();
}

void ExpectError(std::string_view text, std::string_view what) {
  const std::string e = ErrorOf(text);
  EXPECT_NE(e.find(what), std::string::npos) << "error: " << e << "\nexpected: " << what;
}

TEST(ServiceTomlTest, MistakesAreRefusedWithWhereAndWhat) {
  const std::string svc = "[[service]]\nprotocol = \"tcp\"\naddress = \"10.0.0.1:80\"\n";
  ExpectError(svc + "lb_algo = \"wlcc\"\n",
              "x.toml: service 1 (TCP 10.0.0.1:80): Scheduler or persistence engine not found");
  ExpectError(svc + "lb_algp = \"wlc\"\n", "service 1 (TCP 10.0.0.1:80): unknown key 'lb_algp'");
  ExpectError("[[service]]\naddress = \"10.0.0.1:80\"\n", "protocol is required");
  ExpectError("[[service]]\nprotocol = \"tcp\"\n", "address is required");
  ExpectError("[[service]]\nprotocol = \"tcp\"\naddress = \"10.0.0.1\"\n", "needs a port");
  ExpectError("[[service]]\nprotocol = \"sctp\"\naddress = \"10.0.0.1:80\"\n", "protocol");
  ExpectError(svc + svc, "service 2 (TCP 10.0.0.1:80): Service already exists");
  ExpectError(svc + "lb_kind = \"TUN\"\n", "needs the kernel");
  ExpectError(svc + "persistence_timeout = \"1500ms\"\n", "whole seconds");
  ExpectError(svc + "persistence_timeout = \"soon\"\n", "not a duration");
  ExpectError(svc + "ops = true\n", "only for UDP");
  ExpectError(svc + "[[service.server]]\naddress = \"10.1.0.1:80\"\nwieght = 2\n",
              "service 1 (TCP 10.0.0.1:80) server 1: unknown key 'wieght'");
  ExpectError(svc +
                  "[[service.server]]\naddress = \"10.1.0.1:80\"\n"
                  "[[service.server]]\naddress = \"10.1.0.1:80\"\n",
              "server 2: Destination already exists");
  ExpectError(svc + "[[service.server]]\naddress = \"10.1.0.1:80\"\nweight = 70000\n",
              "weight must be an integer from 0 to 65535");
  ExpectError(svc + "[[service.server]]\naddress = \"10.1.0.1:80\"\nlb_kind = \"DR\"\n",
              "direct return");
  ExpectError(svc +
                  "[service.check]\ntype = \"TCP_CHECK\"\npath = \"/x\"\n"
                  "[[service.server]]\naddress = \"10.1.0.1:80\"\n",
              "HTTP_GET options");
  ExpectError(svc + "[service.check]\ntype = \"PING\"\n", "check: type");
  ExpectError(svc + "[service.check]\nretyr = 2\n", "check: unknown key 'retyr'");
  ExpectError("[[service]]\nprotocol = \"tcp\"\naddress = \"10.0.0.1:80\"\nlb_algo = = 1\n",
              "x.toml:4");
  ExpectError("service = 3\n", "must be [[service]] tables");
  ExpectError(svc + "on_marked_down = \"shutdown\"\n", "must be \"shutdown-sessions\"");
}

// HAProxy's on-marked-down: set on a service it is the default of its servers, which may say
// otherwise; "none" is the default.
TEST(ServiceTomlTest, OnMarkedDownIsAServiceDefaultAndAServerOption) {
  auto t = LoadServicesToml(R"(
[[service]]
protocol = "tcp"
address = "10.0.0.1:80"
on_marked_down = "shutdown-sessions"
[[service.server]]
address = "10.1.0.1:80"
[[service.server]]
address = "10.1.0.2:80"
on_marked_down = "none"
[[service]]
protocol = "tcp"
address = "10.0.0.1:81"
[[service.server]]
address = "10.1.0.1:81"
[[service.server]]
address = "10.1.0.2:81"
on_marked_down = "shutdown-sessions"
)",
                            "x.toml");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  const auto& a = t->Find(Key("tcp", "10.0.0.1:80"))->dests;
  const auto& b = t->Find(Key("tcp", "10.0.0.1:81"))->dests;
  EXPECT_TRUE(a.at(Ap("10.1.0.1:80")).shutdown_sessions);
  EXPECT_FALSE(a.at(Ap("10.1.0.2:80")).shutdown_sessions);
  EXPECT_FALSE(b.at(Ap("10.1.0.1:81")).shutdown_sessions);
  EXPECT_TRUE(b.at(Ap("10.1.0.2:81")).shutdown_sessions);
  EXPECT_NE(SaveServicesToml(*t).find("on_marked_down = 'shutdown-sessions'"), std::string::npos)
      << SaveServicesToml(*t);
}

TEST(ServiceTomlTest, SaveThenLoadGivesAnEqualTable) {
  for (uint64_t seed = 1; seed <= 300; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    Random rng(seed);
    const VirtualServiceTable table = testing::RandomTable(rng);
    const std::string text = SaveServicesToml(table);
    auto loaded = LoadServicesToml(text, "saved");
    ASSERT_TRUE(loaded.ok()) << loaded.status().ToString() << "\n" << text;
    EXPECT_TRUE(*loaded == table) << text;
    EXPECT_EQ(SaveServicesToml(*loaded), text);
  }
}

}  // namespace
}  // namespace vsc::vservice
