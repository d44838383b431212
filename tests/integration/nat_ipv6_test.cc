// Virtual services on IPv6, end to end over real sockets (issue 12, "IPv4 and IPv6 alike"): a
// TCP nat service on [::1]:PORT in front of two nginx listening on [::1] (curl -g), with the
// default TCP connect check and with an HTTP_GET check against the IPv6 destinations (a killed
// backend is marked down and the clients are still served, a restarted one comes back), and a
// UDP nat service on [::1] in front of dnsmasq on ::1 (dig @::1). The director runs in this
// process, the peers are child processes on ::1.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>

#include "common/subprocess.h"
#include "integration/nat_peers_fixture.h"

namespace vsc::director {
namespace {

using std::chrono::milliseconds;
using test_support::FreePort;
using vservice::AddrPort;
using vservice::IpAddress;
using vservice::ServiceKey;

constexpr const char* kLoopback6 = "::1";

class NatIpv6Test : public DirectorInProcessTest {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(RequireTools({kNginx, kDnsmasq, kDig, kCurl}));
    vip_port_ = FreePort(kLoopback6);
    a_ = std::make_unique<Nginx>(dir_.File("a"), kLoopback6, FreePort(kLoopback6), "backend-a");
    b_ = std::make_unique<Nginx>(dir_.File("b"), kLoopback6, FreePort(kLoopback6), "backend-b");
    ASSERT_NO_FATAL_FAILURE(a_->Start());
    ASSERT_NO_FATAL_FAILURE(b_->Start());
  }

  ServiceKey Key(vservice::Proto proto) const {
    return {proto, *IpAddress::Parse(kLoopback6), vip_port_};
  }
  // One request through the VIP, as an operator would write it (-g: no URL globbing of [ ]).
  std::string Curl() {
    return Shell(std::string(kCurl) + " -g -s -m 5 'http://[::1]:" + std::to_string(vip_port_) +
                 "/'");
  }

  // Both backends answer; B is killed: the clients are still served (by A) and B is marked
  // DOWN by its check; B restarts: it is UP again and serves.
  void KillAndRestartB(const char* check_name) {
    int seen_a = 0, seen_b = 0;
    for (int i = 0; i < 10; ++i) {
      const std::string body = Curl();
      seen_a += body == "backend-a\n";
      seen_b += body == "backend-b\n";
    }
    EXPECT_EQ(seen_a + seen_b, 10) << check_name;
    EXPECT_GT(seen_a, 0) << check_name;
    EXPECT_GT(seen_b, 0) << check_name;
    b_->Kill();
    for (int i = 0; i < 10; ++i) EXPECT_EQ(Curl(), "backend-a\n") << check_name << " request " << i;
    const ServiceKey tcp = Key(vservice::Proto::kTcp);
    EXPECT_TRUE(test_support::WaitUntil([&] { return Dest(tcp, b_->addr()).state == "DOWN"; },
                                        milliseconds(10000), milliseconds(20)))
        << check_name << ": B never marked DOWN";
    const DestRuntime down = Dest(tcp, b_->addr());
    EXPECT_FALSE(down.usable);
    std::printf("%s: [::1] backend DOWN: %s\n", check_name, down.check_result.c_str());
    ASSERT_NO_FATAL_FAILURE(b_->Start());
    EXPECT_TRUE(test_support::WaitUntil([&] { return Dest(tcp, b_->addr()).usable; },
                                        milliseconds(10000), milliseconds(20)))
        << check_name << ": B never came back";
    EXPECT_TRUE(test_support::WaitUntil([&] { return Curl() == "backend-b\n"; }, milliseconds(5000),
                                        milliseconds(20)));
  }

  uint16_t vip_port_ = 0;
  std::unique_ptr<Nginx> a_, b_;
};

TEST_F(NatIpv6Test, TcpNatOnIpv6VipWithTheDefaultConnectCheck) {
  ASSERT_NO_FATAL_FAILURE(
      StartDirector(TwoBackends(Key(vservice::Proto::kTcp), a_->addr(), b_->addr())));
  KillAndRestartB("TCP_CHECK");
}

TEST_F(NatIpv6Test, TcpNatOnIpv6VipWithAnHttpGetCheck) {
  vservice::CheckConfig http;
  http.type = vservice::CheckType::kHttpGet;
  http.path = "/";
  http.delay_loop = milliseconds(200);
  http.connect_timeout = milliseconds(500);
  http.retry = 1;
  http.delay_before_retry = milliseconds(100);
  ASSERT_NO_FATAL_FAILURE(
      StartDirector(TwoBackends(Key(vservice::Proto::kTcp), a_->addr(), b_->addr(), http)));
  ASSERT_TRUE(test_support::WaitUntil(
      [&] {
        return Dest(Key(vservice::Proto::kTcp), a_->addr()).check_result.find("HTTP status 200") !=
               std::string::npos;
      },
      milliseconds(5000), milliseconds(20)))
      << "the HTTP_GET check never got a 200 from [::1]: "
      << Dest(Key(vservice::Proto::kTcp), a_->addr()).check_result;
  KillAndRestartB("HTTP_GET");
}

TEST_F(NatIpv6Test, UdpNatOnIpv6InFrontOfDnsmasq) {
  const uint16_t dns_port = FreePort(kLoopback6);
  SpawnOptions o;
  o.argv = {kDnsmasq,
            "--keep-in-foreground",
            "--no-resolv",
            "--no-hosts",
            "--listen-address=::1",
            "--bind-interfaces",
            "--port=" + std::to_string(dns_port),
            "--address=/vsc.test/10.9.8.7",
            "--address=/vsc.test/2001:db8::77",
            "--pid-file=" + dir_.File("dnsmasq.pid"),
            "--user=root"};
  o.log_path = dir_.File("dnsmasq.log");
  auto dns = Subprocess::Spawn(o);
  ASSERT_TRUE(dns.ok()) << dns.status().ToString();
  const ServiceKey udp = Key(vservice::Proto::kUdp);
  vservice::VirtualServiceTable t;
  ASSERT_TRUE(t.AddService(udp, {}).ok());
  ASSERT_TRUE(t.AddDest(udp, At(kLoopback6, dns_port), {}).ok());
  ASSERT_NO_FATAL_FAILURE(StartDirector(std::move(t)));
  const std::string dig = std::string(kDig) + " @::1 -p " + std::to_string(vip_port_) +
                          " vsc.test +short +time=1 +tries=1";
  ASSERT_TRUE(test_support::WaitUntil([&] { return Shell(dig + " A") == "10.9.8.7\n"; },
                                      milliseconds(10000), milliseconds(20)))
      << Shell(dig);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(Shell(dig + " AAAA"), "2001:db8::77\n");
  const DestRuntime d = Dest(udp, At(kLoopback6, dns_port));
  EXPECT_GE(d.connections, 6u);  // dig uses a new source port each run: one session each
  EXPECT_EQ(d.packets_in, d.packets_out);
  EXPECT_GE(d.packets_out, 6u);
}

}  // namespace
}  // namespace vsc::director
