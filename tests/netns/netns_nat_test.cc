// A TCP nat service across hosts when one destination black-holes SYNs (issue 12): the director
// and two nginx hosts each in their own network namespace on a private bridge; the client's
// requests start in the director's namespace (a host fewer to build: the path under test is the
// director's to the nginx hosts, across the bridge). The
// director runs `vsc director --config` with one TCP service over both nginx; then web2 drops
// every SYN to its port (iptables in web2's namespace, which no other host shares). Every client
// request must still be answered (by web1): a connect to web2 runs into nat_connect_timeout_ms and
// the flow is redispatched; the TCP_CHECK marks web2 DOWN within its worst-case detection time;
// once the rule is gone web2 comes back UP.
//
// Needs root, iproute2, iptables and nginx (scripts/install-deps); fails, never skips, without
// them.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>

#include "common/subprocess.h"
#include "net/http_client.h"
#include "netns/netns_topology.h"
#include "support/nginx_conf.h"
#include "support/temp_dir.h"
#include "support/wait_until.h"
#include "vservice/check_config.h"

#ifndef VSC_BINARY
#error "VSC_BINARY must name the vsc executable"
#endif

namespace vsc::netns {
namespace {

using namespace std::chrono_literals;
using std::chrono::milliseconds;

constexpr const char* kNginx = "/usr/sbin/nginx";
constexpr const char* kIptables = "/usr/sbin/iptables";
constexpr int kWebPort = 8080;
constexpr int kVipPort = 80;
constexpr int kConnectTimeoutMs = 400;  // nat_connect_timeout_ms

// The check of both destinations, as written in the TOML below.
vservice::CheckConfig Check() {
  vservice::CheckConfig c = vservice::DefaultStaticCheck();
  c.delay_loop = 500ms;
  c.connect_timeout = 300ms;
  c.retry = 1;
  c.delay_before_retry = 200ms;
  return c;
}

std::string Shell(const std::string& command) {
  std::string out;
  FILE* p = ::popen(command.c_str(), "r");
  if (p == nullptr) return out;
  char buf[512];
  while (size_t n = std::fread(buf, 1, sizeof(buf), p)) out.append(buf, n);
  ::pclose(p);
  return out;
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class NetnsNatTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(::geteuid(), 0u) << "netns_test needs root to create network namespaces";
    for (const char* tool : {kNginx, kIptables}) {
      ASSERT_TRUE(std::filesystem::exists(tool)) << tool << " missing: run scripts/install-deps";
    }
    auto topo = NetnsTopology::Create({"director", "web1", "web2"}, "10.214.0.");
    ASSERT_TRUE(topo.ok()) << "cannot build the test network: " << topo.status().ToString();
    topo_ = std::move(*topo);
    ASSERT_NO_FATAL_FAILURE(StartNginx("web1", web1_));
    ASSERT_NO_FATAL_FAILURE(StartNginx("web2", web2_));
    ASSERT_NO_FATAL_FAILURE(StartDirector());
  }
  void TearDown() override {
    if (HasFailure()) {
      std::fprintf(stderr, "---- director.log ----\n%s\n",
                   ReadAll(dir_.File("director.log")).c_str());
    }
    // Processes first: a namespace lives on while a process is inside it.
    director_.reset();
    web1_.reset();
    web2_.reset();
    topo_.reset();
  }

  // `argv` run inside the host's namespace.
  SpawnOptions InHost(const std::string& host, std::vector<std::string> argv) const {
    SpawnOptions o;
    o.argv = {IpTool(), "netns", "exec", topo_->Namespace(host)};
    o.argv.insert(o.argv.end(), argv.begin(), argv.end());
    o.log_path = dir_.File(host + ".log");
    return o;
  }
  std::string ShellIn(const std::string& host, const std::string& command) const {
    return Shell(IpTool() + " netns exec " + topo_->Namespace(host) + " " + command);
  }

  void StartNginx(const std::string& host, std::unique_ptr<Subprocess>& out) {
    const std::string d = dir_.File(host);
    test_support::WriteNginxConf(d, topo_->Address(host), kWebPort, host);
    auto p = Subprocess::Spawn(
        InHost(host, {kNginx, "-p", d, "-c", d + "/nginx.conf", "-e", d + "/error.log"}));
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    out = std::make_unique<Subprocess>(std::move(*p));
    ASSERT_TRUE(
        test_support::WaitUntil([&] { return Get(host, kWebPort) == host + "\n"; }, 10s, 20ms))
        << "nginx on " << host << " does not answer on port " << kWebPort;
  }

  void StartDirector() {
    const vservice::CheckConfig c = Check();
    auto ms = [](Duration d) { return std::to_string(ToMillis(d)) + "ms"; };
    std::ofstream(dir_.File("director.toml"))
        << "[director]\nlisten = \"" << topo_->Address("director") << "\"\ninsecure = true\n"
        << "workers = 1\nlookup_port = 0\ncontrol_port = 0\nheartbeat_port = 0\nadmin_port = 0\n"
        << "ring_port = 0\nwrite_port = 0\nsql_port = 0\nhttp_port = 0\n"
        << "admin_token_file = \"" << dir_.File("admin.token") << "\"\n"
        << "log_file = \"" << dir_.File("director-log.db") << "\"\n"
        << "nat_connect_timeout_ms = " << kConnectTimeoutMs << "\n\n"
        << "[[service]]\nprotocol = \"tcp\"\naddress = \"" << topo_->Address("director") << ":"
        << kVipPort << "\"\nlb_algo = \"rr\"\nlb_kind = \"NAT\"\n"
        << "[service.check]\ntype = \"TCP_CHECK\"\ndelay_loop = \"" << ms(c.delay_loop)
        << "\"\nconnect_timeout = \"" << ms(c.connect_timeout) << "\"\nretry = " << c.retry
        << "\ndelay_before_retry = \"" << ms(c.delay_before_retry) << "\"\n"
        << "[[service.server]]\naddress = \"" << topo_->Address("web1") << ":" << kWebPort << "\"\n"
        << "[[service.server]]\naddress = \"" << topo_->Address("web2") << ":" << kWebPort
        << "\"\n";
    const std::string ready = dir_.File("director.ready");
    SpawnOptions o = InHost("director", {VSC_BINARY, "director", "--config",
                                         dir_.File("director.toml"), "--ready-file", ready});
    o.log_path = dir_.File("director.log");
    auto p = Subprocess::Spawn(o);
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    director_ = std::make_unique<Subprocess>(std::move(*p));
    auto text = WaitForFile(ready, 15s, director_.get());
    ASSERT_TRUE(text.ok()) << text.status().ToString() << "\n" << ReadAll(o.log_path);
    auto j = nlohmann::json::parse(*text, nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << *text;
    admin_port_ = j.value("admin_port", 0);
    ASSERT_NE(admin_port_, 0) << *text;
    std::ifstream(dir_.File("admin.token")) >> token_;
    ASSERT_FALSE(token_.empty());
  }

  // web2's state in GET /v1/services ("" when unreadable).
  std::string Web2State() const {
    Result<net::HttpResponse> r = Unavailable("not run");
    Status entered = topo_->RunIn("director", [&] {
      r = net::HttpRequestSync("127.0.0.1", admin_port_, "GET", "/v1/services", "",
                               {{"Authorization", "Bearer " + token_}}, 2s);
    });
    if (!entered.ok() || !r.ok() || r->status != 200) return "";
    auto j = nlohmann::json::parse(r->body, nullptr, false);
    if (j.is_discarded() || !j.contains("services")) return "";
    const std::string web2 = topo_->Address("web2") + ":" + std::to_string(kWebPort);
    for (const auto& s : j["services"]) {
      for (const auto& d : s.value("servers", nlohmann::json::array())) {
        if (d.value("address", "") == web2) return d.value("state", "");
      }
    }
    return "";
  }

  // GET / on host:port from the director's namespace: the body, or "error: ..." when it failed.
  std::string Get(const std::string& host, int port) const {
    Result<net::HttpResponse> r = Unavailable("not run");
    Status entered = topo_->RunIn("director", [&] {
      r = net::HttpRequestSync(topo_->Address(host), static_cast<uint16_t>(port), "GET", "/", "",
                               {}, 5s);
    });
    if (!entered.ok()) return "error: " + entered.ToString();
    if (!r.ok()) return "error: " + r.status().ToString();
    return r->body;
  }
  std::string Request() const { return Get("director", kVipPort); }
  void DropSyns(const char* op) const {
    ShellIn("web2", std::string(kIptables) + " " + op + " INPUT -p tcp --syn --dport " +
                        std::to_string(kWebPort) + " -j DROP");
  }

  test_support::TempDir dir_;
  std::unique_ptr<NetnsTopology> topo_;
  std::unique_ptr<Subprocess> web1_, web2_, director_;
  uint16_t admin_port_ = 0;
  std::string token_;
};

TEST_F(NetnsNatTest, SynDroppingHostIsRedispatchedMarkedDownAndComesBack) {
  int web1 = 0, web2 = 0;
  ASSERT_TRUE(test_support::WaitUntil([&] { return Web2State() == "UP"; }, 5s, 20ms))
      << Web2State();
  for (int i = 0; i < 10; ++i) {
    const std::string body = Request();
    web1 += body == "web1\n";
    web2 += body == "web2\n";
  }
  ASSERT_EQ(web1 + web2, 10);
  ASSERT_GT(web2, 0) << "rr never chose web2";

  DropSyns("-A");
  // While requests keep coming, a poller notes when the check marks web2 DOWN.
  const auto dropped = std::chrono::steady_clock::now();
  const Duration bound = vservice::WorstCaseDetectionTime(Check());
  std::atomic<int64_t> down_after_ms{-1};
  std::thread poller([&] {
    if (test_support::WaitUntil([&] { return Web2State() == "DOWN"; }, bound + 3s, 10ms)) {
      down_after_ms =
          std::chrono::duration_cast<milliseconds>(std::chrono::steady_clock::now() - dropped)
              .count();
    }
  });
  // No request is lost while web2 black-holes: one that picks web2 waits out the connect
  // timeout and is redispatched to web1.
  for (int i = 0; i < 12; ++i) EXPECT_EQ(Request(), "web1\n") << "request " << i;
  poller.join();
  const std::string log = ReadAll(dir_.File("director.log"));
  EXPECT_NE(log.find("no answer within " + std::to_string(kConnectTimeoutMs) +
                     " ms; trying another destination"),
            std::string::npos)
      << "no connect timed out and was redispatched:\n"
      << log;
  // The check marks web2 DOWN within its worst case (each probe waits out connect_timeout).
  ASSERT_GE(down_after_ms.load(), 0) << "web2 never marked DOWN; state " << Web2State();
  // (+200 ms: the poller's tick and its admin round trip, on a shared machine)
  EXPECT_LE(down_after_ms.load(), ToMillis(bound) + 200);
  std::printf("web2 marked DOWN %lld ms after its SYNs were dropped (bound %lld ms)\n",
              static_cast<long long>(down_after_ms.load()),
              static_cast<long long>(ToMillis(bound)));
  for (int i = 0; i < 6; ++i) EXPECT_EQ(Request(), "web1\n") << "request " << i << " after DOWN";

  DropSyns("-D");
  ASSERT_TRUE(test_support::WaitUntil([&] { return Web2State() == "UP"; }, bound + 2s, 10ms))
      << Web2State();
  EXPECT_TRUE(test_support::WaitUntil([&] { return Request() == "web2\n"; }, 5s, 10ms));
}

}  // namespace
}  // namespace vsc::netns
