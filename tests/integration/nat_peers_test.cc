// Virtual services in front of real Debian servers that run no agent (issue 12): two nginx
// backends behind a TCP nat service exercised with curl (redispatch when one is killed, the
// default check marks it down within its bound, a restart brings it back, weight 0, the sorry
// server), two redis-server behind a TCP nat service exercised with redis-benchmark and
// redis-cli, and dnsmasq behind a UDP nat service exercised with dig. The director runs in this
// process; the peers are child processes with their own configuration in a temporary
// directory, on 127.0.0.x ports. Needs nginx-light, dnsmasq-base, bind9-dnsutils, curl,
// redis-server and redis-tools (scripts/install-deps).
#include <gtest/gtest.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "common/subprocess.h"
#include "integration/nat_peers_fixture.h"

namespace vsc::director {
namespace {

using std::chrono::milliseconds;
using vservice::AddrPort;
using vservice::IpAddress;
using vservice::ServiceKey;

constexpr const char* kRedisServer = "/usr/bin/redis-server";
constexpr const char* kRedisBenchmark = "/usr/bin/redis-benchmark";
constexpr const char* kRedisCli = "/usr/bin/redis-cli";

using test_support::FreePort;
using test_support::SpawnServer;

class NatPeersTest : public DirectorInProcessTest {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(
        RequireTools({kNginx, kDnsmasq, kDig, kCurl, kRedisServer, kRedisBenchmark, kRedisCli}));
    vip_port_ = FreePort("127.0.0.1");
    a_ = std::make_unique<Nginx>(dir_.File("a"), "127.0.0.2", FreePort("127.0.0.2"), "backend-a");
    b_ = std::make_unique<Nginx>(dir_.File("b"), "127.0.0.3", FreePort("127.0.0.3"), "backend-b");
    ASSERT_NO_FATAL_FAILURE(a_->Start());
    ASSERT_NO_FATAL_FAILURE(b_->Start());
  }

  ServiceKey Tcp() const { return {vservice::Proto::kTcp, IpAddress::V4(0x7f000001), vip_port_}; }

  std::string Curl() {
    return Shell(std::string(kCurl) + " -s -m 5 http://127.0.0.1:" + std::to_string(vip_port_) +
                 "/");
  }

  uint16_t vip_port_ = 0;
  std::unique_ptr<Nginx> a_, b_;
};

TEST_F(NatPeersTest, KilledBackendIsRedispatchedMarkedDownAndComesBack) {
  ASSERT_NO_FATAL_FAILURE(StartDirector(TwoBackends(Tcp(), a_->addr(), b_->addr())));
  int seen_a = 0, seen_b = 0;
  for (int i = 0; i < 20; ++i) {
    const std::string body = Curl();
    seen_a += body == "backend-a\n";
    seen_b += body == "backend-b\n";
  }
  EXPECT_EQ(seen_a + seen_b, 20);
  EXPECT_GT(seen_a, 0);
  EXPECT_GT(seen_b, 0);

  b_->Kill();
  // While the clients keep coming, a poller notes when the director marks B DOWN.
  const auto killed = std::chrono::steady_clock::now();
  std::atomic<int64_t> down_after_ms{-1};
  std::thread poller([&] {
    while (std::chrono::steady_clock::now() - killed < std::chrono::seconds(10)) {
      if (Dest(Tcp(), b_->addr()).state == "DOWN") {
        down_after_ms =
            std::chrono::duration_cast<milliseconds>(std::chrono::steady_clock::now() - killed)
                .count();
        return;
      }
      std::this_thread::sleep_for(milliseconds(20));  // polling a condition
    }
  });
  for (int i = 0; i < 20; ++i) EXPECT_EQ(Curl(), "backend-a\n") << "request " << i;
  poller.join();
  // keepalived's bound for a refusing server: delay_loop × retry + connect_timeout.
  const vservice::CheckConfig check = vservice::DefaultStaticCheck();
  const int64_t bound_ms = std::chrono::duration_cast<milliseconds>(check.delay_loop * check.retry +
                                                                    check.connect_timeout)
                               .count();
  ASSERT_GE(down_after_ms.load(), 0) << "B never marked DOWN";
  EXPECT_LE(down_after_ms.load(), bound_ms);
  std::printf("backend marked DOWN %lld ms after the kill (bound %lld ms)\n",
              static_cast<long long>(down_after_ms.load()), static_cast<long long>(bound_ms));

  ASSERT_NO_FATAL_FAILURE(b_->Start());
  ASSERT_TRUE(test_support::WaitUntil(
      [&] { return Dest(Tcp(), b_->addr()).usable; },
      std::chrono::duration_cast<milliseconds>(check.delay_loop * 2), milliseconds(20)));
  EXPECT_TRUE(test_support::WaitUntil([&] { return Curl() == "backend-b\n"; }, milliseconds(5000),
                                      milliseconds(20)));
}

TEST_F(NatPeersTest, WeightZeroQuiescesAndTheSorryServerAnswersWhenNoneIsLeft) {
  Nginx sorry(dir_.File("sorry"), "127.0.0.4", FreePort("127.0.0.4"), "sorry");
  ASSERT_NO_FATAL_FAILURE(sorry.Start());
  ASSERT_NO_FATAL_FAILURE(StartDirector(TwoBackends(Tcp(), a_->addr(), b_->addr())));
  vservice::DestConfig zero;
  zero.weight = 0;
  ASSERT_TRUE(Edit([&](auto& t) { return t.EditDest(Tcp(), a_->addr(), zero).status(); }).ok());
  for (int i = 0; i < 10; ++i) EXPECT_EQ(Curl(), "backend-b\n");
  EXPECT_EQ(Dest(Tcp(), a_->addr()).state, "QUIESCENT");
  vservice::ServiceConfig with_sorry;
  with_sorry.scheduler = "rr";
  with_sorry.sorry_server = sorry.addr();
  ASSERT_TRUE(Edit([&](auto& t) {
                VSC_RETURN_IF_ERROR(t.EditService(Tcp(), with_sorry).status());
                return t.EditDest(Tcp(), b_->addr(), zero).status();
              }).ok());
  for (int i = 0; i < 5; ++i) EXPECT_EQ(Curl(), "sorry\n");
}

// One redis-server on host:port, no persistence, its files in `dir`.
std::optional<Subprocess> StartRedis(const std::string& dir, const char* host, uint16_t port) {
  std::filesystem::create_directories(dir);
  SpawnOptions o;
  o.argv = {kRedisServer,
            "--bind",
            host,
            "--port",
            std::to_string(port),
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            dir,
            "--logfile",
            "",
            "--daemonize",
            "no"};
  o.log_path = dir + "/redis.log";
  return SpawnServer(o, host, port);
}

// How many times `command` ran on the redis at host:port (INFO commandstats), -1 if unreadable.
int64_t RedisCalls(const char* host, uint16_t port, const std::string& command) {
  const std::string info = Shell(std::string(kRedisCli) + " -h " + host + " -p " +
                                 std::to_string(port) + " INFO commandstats");
  const std::string key = "cmdstat_" + command + ":calls=";
  const size_t at = info.find(key);
  return at == std::string::npos ? (info.empty() ? -1 : 0)
                                 : std::atoll(info.c_str() + at + key.size());
}

TEST_F(NatPeersTest, RedisBenchmarkThroughATcpNatServiceGetsEveryReply) {
  const uint16_t pa = FreePort("127.0.0.2"), pb = FreePort("127.0.0.3");
  std::optional<Subprocess> ra = StartRedis(dir_.File("redis-a"), "127.0.0.2", pa);
  std::optional<Subprocess> rb = StartRedis(dir_.File("redis-b"), "127.0.0.3", pb);
  ASSERT_TRUE(ra && rb);
  ASSERT_NO_FATAL_FAILURE(
      StartDirector(TwoBackends(Tcp(), At("127.0.0.2", pa), At("127.0.0.3", pb))));
  const std::string vip = " -h 127.0.0.1 -p " + std::to_string(vip_port_);

  // redis-benchmark: 10 connections spread over both servers by rr, a bounded number of
  // requests, it exits non-zero on an error reply or a broken connection.
  constexpr int kRequests = 4000;
  int status = -1;
  const std::string bench = Shell("timeout 60 " + std::string(kRedisBenchmark) + vip + " -n " +
                                      std::to_string(kRequests) + " -c 10 -t set,get,incr -q 2>&1",
                                  &status);
  EXPECT_EQ(status, 0) << bench;
  for (const char* test : {"SET:", "GET:", "INCR:"}) {
    EXPECT_NE(bench.find(test), std::string::npos) << test << " missing from:\n" << bench;
  }
  EXPECT_EQ(bench.find("rror"), std::string::npos) << bench;
  // Every request reached a server exactly once, and both servers took part.
  for (const char* cmd : {"set", "get", "incr"}) {
    const int64_t a = RedisCalls("127.0.0.2", pa, cmd), b = RedisCalls("127.0.0.3", pb, cmd);
    EXPECT_EQ(a + b, kRequests) << cmd << ": " << a << " + " << b;
    EXPECT_GT(a, 0) << cmd;
    EXPECT_GT(b, 0) << cmd;
  }

  // Replies are right, in order: one redis-cli connection (one server) writes and reads back
  // 300 keys, and the counter of INCR counts every one.
  std::string script, expected;
  for (int i = 0; i < 300; ++i) {
    script += "SET vsc:" + std::to_string(i) + " value-" + std::to_string(i * 7) + "\n";
    script += "GET vsc:" + std::to_string(i) + "\nINCR vsc:counter\n";
    expected += "OK\nvalue-" + std::to_string(i * 7) + "\n" + std::to_string(i + 1) + "\n";
  }
  std::ofstream(dir_.File("script.redis")) << script;
  const std::string replies = Shell(
      "timeout 30 " + std::string(kRedisCli) + vip + " < " + dir_.File("script.redis") + " 2>&1",
      &status);
  EXPECT_EQ(status, 0);
  EXPECT_EQ(replies, expected);
}

TEST_F(NatPeersTest, UdpNatInFrontOfDnsmasq) {
  const uint16_t dns_port = FreePort("127.0.0.2");
  SpawnOptions o;
  o.argv = {kDnsmasq,
            "--keep-in-foreground",
            "--no-resolv",
            "--no-hosts",
            "--listen-address=127.0.0.2",
            "--bind-interfaces",
            "--port=" + std::to_string(dns_port),
            "--address=/vsc.test/10.9.8.7",
            "--pid-file=" + dir_.File("dnsmasq.pid"),
            "--user=root"};
  o.log_path = dir_.File("dnsmasq.log");
  auto dns = Subprocess::Spawn(o);
  ASSERT_TRUE(dns.ok()) << dns.status().ToString();
  const ServiceKey udp{vservice::Proto::kUdp, IpAddress::V4(0x7f000001), vip_port_};
  vservice::VirtualServiceTable t;
  ASSERT_TRUE(t.AddService(udp, {}).ok());
  ASSERT_TRUE(t.AddDest(udp, At("127.0.0.2", dns_port), {}).ok());
  ASSERT_NO_FATAL_FAILURE(StartDirector(std::move(t)));
  const std::string dig = std::string(kDig) + " @127.0.0.1 -p " + std::to_string(vip_port_) +
                          " vsc.test +short +time=1 +tries=1";
  ASSERT_TRUE(test_support::WaitUntil([&] { return Shell(dig) == "10.9.8.7\n"; },
                                      milliseconds(10000), milliseconds(20)))
      << Shell(dig);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(Shell(dig), "10.9.8.7\n");
  const DestRuntime d = Dest(udp, At("127.0.0.2", dns_port));
  EXPECT_GE(d.connections, 6u);  // dig uses a new source port each run: one session each
  EXPECT_EQ(d.packets_in, d.packets_out);
}

}  // namespace
}  // namespace vsc::director
