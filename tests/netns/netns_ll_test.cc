// Seed 004's `ll` across hosts (issue 12): a director and two real-server hosts, each in its own
// network namespace on a private bridge, each real server in its own cgroup. A host runs an nginx
// and `vsc realserver --service web=tcp:ADDR:8080 --load-cgroup CG`, both inside CG, so its
// heartbeat carries the run queue of CG and its descendants, not the node's loadavg (which both
// hosts share: namespaces split the network, not the CPU). The director's TCP service over both
// nginx schedules with `ll`. Bounded CPU burners put into rs1's cgroup (a child, CG/burn, under a
// CPU quota) must send every new connection to rs2; moved into rs2's, every one goes to rs1.
//
// Needs root, iproute2, nsenter (util-linux), nginx, bash and a cgroup cpu controller (v1
// /sys/fs/cgroup/cpu or v2 /sys/fs/cgroup); fails, never skips, without them.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "common/file_text.h"
#include "common/subprocess.h"
#include "net/http_client.h"
#include "netns/netns_topology.h"
#include "proto/cluster_key.h"
#include "store/resource_builder.h"
#include "support/nginx_conf.h"
#include "support/temp_dir.h"
#include "support/wait_until.h"

#ifndef VSC_BINARY
#error "VSC_BINARY must name the vsc executable"
#endif

namespace vsc::netns {
namespace {

using namespace std::chrono_literals;

constexpr const char* kLlNginx = "/usr/sbin/nginx";
constexpr const char* kBash = "/bin/bash";
constexpr const char* kNsenter = "/usr/bin/nsenter";
constexpr int kLlWebPort = 8080;
constexpr int kLlVipPort = 80;
constexpr int kBurners = 3;    // rs1's run queue >= 3 while loaded; an idle host reports 0-1
constexpr int kRequests = 20;  // new connections per phase

// A log's text for a failure message, or why it cannot be read.
std::string LogText(const std::string& path) {
  auto text = ReadFileText(path);
  return text.ok() ? *text : text.status().ToString();
}

// A cgroup directory made for the test, with a child `burn` whose CPU is capped at 20 % of one
// core (v1 cpu.cfs_quota_us or v2 cpu.max); removed, child first, when the test ends.
class TestCgroup {
 public:
  // Where cgroups with a cpu controller are made: v1's cpu hierarchy, else the v2 root.
  static std::string Base() {
    if (std::filesystem::exists("/sys/fs/cgroup/cpu/cpu.cfs_quota_us")) return "/sys/fs/cgroup/cpu";
    if (std::filesystem::exists("/sys/fs/cgroup/cgroup.controllers")) return "/sys/fs/cgroup";
    return "";
  }
  explicit TestCgroup(std::string path) : path_(std::move(path)) {}
  ~TestCgroup() {
    for (const std::string& d : {path_ + "/burn", path_}) {
      std::error_code ec;
      // A killed task leaves its cgroup a moment after it is reaped.
      test_support::WaitUntil([&] { return std::filesystem::remove(d, ec) || !ec; }, 5s, 20ms);
    }
  }
  TestCgroup(const TestCgroup&) = delete;
  TestCgroup& operator=(const TestCgroup&) = delete;

  // Creates the directory and its capped child; the reason when it cannot.
  std::string Create() const {
    std::error_code ec;
    std::filesystem::create_directories(path_ + "/burn", ec);
    if (ec) return "mkdir " + path_ + "/burn: " + ec.message();
    const bool v1 = std::filesystem::exists(path_ + "/burn/cpu.cfs_quota_us");
    Status capped;
    if (v1) {
      capped = WriteFileText(path_ + "/burn/cpu.cfs_period_us", "100000");
      if (capped.ok()) capped = WriteFileText(path_ + "/burn/cpu.cfs_quota_us", "20000");
    } else {  // v2: the cpu controller must be enabled down to the child
      for (const std::string& d : {std::filesystem::path(path_).parent_path().string(), path_}) {
        capped = WriteFileText(d + "/cgroup.subtree_control", "+cpu");
        if (!capped.ok()) break;
      }
      if (capped.ok()) capped = WriteFileText(path_ + "/burn/cpu.max", "20000 100000");
    }
    return capped.ok() ? "" : "cannot cap the CPU of " + path_ + "/burn: " + capped.ToString();
  }
  std::string path() const { return path_; }
  std::string procs() const { return path_ + "/cgroup.procs"; }
  std::string burn_procs() const { return path_ + "/burn/cgroup.procs"; }

 private:
  std::string path_;
};

class NetnsLlTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(::geteuid(), 0u) << "netns_test needs root for network namespaces and cgroups";
    for (const char* tool : {kLlNginx, kBash, kNsenter}) {
      ASSERT_TRUE(std::filesystem::exists(tool)) << tool << " missing: run scripts/install-deps";
    }
    const std::string base = TestCgroup::Base();
    ASSERT_FALSE(base.empty()) << "no cgroup cpu controller (v1 /sys/fs/cgroup/cpu or v2)";
    auto topo = NetnsTopology::Create({"director", "rs1", "rs2"}, "10.215.0.");
    ASSERT_TRUE(topo.ok()) << "cannot build the test network: " << topo.status().ToString();
    topo_ = std::move(*topo);

    store::BuildOptions bo;
    bo.path = dir_.File("resources.db");
    bo.records = 100;
    auto built = store::BuildResourceDb(bo, {});
    ASSERT_TRUE(built.ok()) << built.status().ToString();
    auto key = proto::ClusterKey::Generate();
    ASSERT_TRUE(key.ok()) << key.status().ToString();
    ASSERT_TRUE(key->WriteFile(dir_.File("cluster.key")).ok());

    ASSERT_NO_FATAL_FAILURE(StartDirector());
    for (const char* host : {"rs1", "rs2"}) {
      cgroups_[host] =
          std::make_unique<TestCgroup>(base + "/vsc-ll-" + std::to_string(::getpid()) + "-" + host);
      const std::string made = cgroups_[host]->Create();
      ASSERT_TRUE(made.empty()) << made;
      ASSERT_NO_FATAL_FAILURE(StartHost(host));
    }
    ASSERT_TRUE(
        test_support::WaitUntil([&] { return Fronted("rs1") && Fronted("rs2"); }, 20s, 50ms))
        << "the destinations were not matched to ACTIVE agents:\n"
        << Services();
  }
  void TearDown() override {
    if (HasFailure()) {
      for (const char* log : {"director.log", "rs1-agent.log", "rs2-agent.log"}) {
        std::fprintf(stderr, "---- %s ----\n%s\n", log, LogText(dir_.File(log)).c_str());
      }
    }
    // Processes first: a namespace or a cgroup lives on while a process is inside it.
    burners_.clear();
    procs_.clear();
    director_.reset();
    cgroups_.clear();
    topo_.reset();
  }

  // `argv` run inside the host's network namespace, log dir/NAME.log, in `cgroup_procs` when
  // given. Through nsenter, not `ip netns exec`: that one remounts /sys, hiding the cgroup
  // hierarchies from the agent (a container's agent sees its own cgroup).
  SpawnOptions InHost(const std::string& host, const std::string& name,
                      std::vector<std::string> argv, const std::string& cgroup_procs = "") const {
    SpawnOptions o;
    o.argv = {kNsenter, "--net=/var/run/netns/" + topo_->Namespace(host)};
    o.argv.insert(o.argv.end(), argv.begin(), argv.end());
    o.log_path = dir_.File(name + ".log");
    o.cgroup_procs = cgroup_procs;
    return o;
  }
  void Start(const SpawnOptions& o) {
    auto p = Subprocess::Spawn(o);
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    procs_.push_back(std::make_unique<Subprocess>(std::move(*p)));
  }

  void StartDirector() {
    std::ofstream(dir_.File("director.toml"))
        << "[director]\nlisten = \"" << topo_->Address("director") << "\"\n"
        << "key_file = \"" << dir_.File("cluster.key") << "\"\n"
        << "workers = 1\nlookup_port = 0\ncontrol_port = 0\nheartbeat_port = 0\nadmin_port = 0\n"
        << "ring_port = 0\nwrite_port = 0\nsql_port = 0\nhttp_port = 0\n"
        << "heartbeat_interval_ms = 100\n"
        << "admin_token_file = \"" << dir_.File("admin.token") << "\"\n"
        << "log_file = \"" << dir_.File("director-log.db") << "\"\n\n"
        << "[[service]]\nprotocol = \"tcp\"\naddress = \"" << topo_->Address("director") << ":"
        << kLlVipPort << "\"\nlb_algo = \"ll\"\nlb_kind = \"NAT\"\n"
        << "[[service.server]]\naddress = \"" << topo_->Address("rs1") << ":" << kLlWebPort
        << "\"\n[[service.server]]\naddress = \"" << topo_->Address("rs2") << ":" << kLlWebPort
        << "\"\n";
    const std::string ready = dir_.File("director.ready");
    auto p = Subprocess::Spawn(InHost(
        "director", "director",
        {VSC_BINARY, "director", "--config", dir_.File("director.toml"), "--ready-file", ready}));
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    director_ = std::make_unique<Subprocess>(std::move(*p));
    auto text = WaitForFile(ready, 15s, director_.get());
    ASSERT_TRUE(text.ok()) << text.status().ToString() << "\n"
                           << LogText(dir_.File("director.log"));
    auto j = nlohmann::json::parse(*text, nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << *text;
    admin_port_ = j.value("admin_port", 0);
    control_port_ = j.value("control_port", 0);
    ASSERT_NE(admin_port_, 0) << *text;
    ASSERT_NE(control_port_, 0) << *text;
    auto token = ReadFileText(dir_.File("admin.token"));
    ASSERT_TRUE(token.ok()) << token.status().ToString();
    token_ = token->substr(0, token->find('\n'));
    ASSERT_FALSE(token_.empty());
  }

  // nginx and `vsc realserver` fronting it, both in the host's cgroup.
  void StartHost(const std::string& host) {
    const std::string cg = cgroups_[host]->procs();
    const std::string d = dir_.File(host);
    test_support::WriteNginxConf(d, topo_->Address(host), kLlWebPort, host);
    ASSERT_NO_FATAL_FAILURE(
        Start(InHost(host, host + "-nginx",
                     {kLlNginx, "-p", d, "-c", d + "/nginx.conf", "-e", d + "/error.log"}, cg)));
    const std::string db = dir_.File(host + ".db");
    std::filesystem::copy_file(dir_.File("resources.db"), db);
    const std::string web = topo_->Address(host) + ":" + std::to_string(kLlWebPort);
    ASSERT_NO_FATAL_FAILURE(Start(
        InHost(host, host + "-agent",
               {VSC_BINARY,      "realserver",
                "--id",          host,
                "--listen",      topo_->Address(host),
                "--director",    topo_->Address("director") + ":" + std::to_string(control_port_),
                "--key-file",    dir_.File("cluster.key"),
                "--db",          db,
                "--workers",     "1",
                "--lookup-port", "0",
                "--http-port",   "0",
                "--sql-port",    "0",
                "--service",     "web=tcp:" + web,
                "--load-cgroup", cgroups_[host]->path(),
                "--ready-file",  dir_.File(host + ".ready")},
               cg)));
    auto text = WaitForFile(dir_.File(host + ".ready"), 15s, procs_.back().get());
    ASSERT_TRUE(text.ok()) << text.status().ToString() << "\n"
                           << LogText(dir_.File(host + "-agent.log"));
  }

  Result<std::string> AdminGet(const std::string& target) const {
    Result<net::HttpResponse> r = Unavailable("not run");
    Status entered = topo_->RunIn("director", [&] {
      r = net::HttpRequestSync("127.0.0.1", admin_port_, "GET", target, "",
                               {{"Authorization", "Bearer " + token_}}, 2s);
    });
    if (!entered.ok()) return entered;
    if (!r.ok()) return r.status();
    if (r->status != 200) return Unavailable(target + ": HTTP " + std::to_string(r->status));
    return r->body;
  }
  std::string Services() const {
    auto s = AdminGet("/v1/services");
    return s.ok() ? *s : s.status().ToString();
  }
  // The host's destination is matched to its agent, and takes new connections.
  bool Fronted(const std::string& host) const {
    auto j = nlohmann::json::parse(Services(), nullptr, false);
    if (j.is_discarded() || !j.contains("services")) return false;
    const std::string web = topo_->Address(host) + ":" + std::to_string(kLlWebPort);
    for (const auto& s : j["services"]) {
      for (const auto& d : s.value("servers", nlohmann::json::array())) {
        if (d.value("address", "") == web) {
          return d.value("server_id", "") == host && d.value("usable", false);
        }
      }
    }
    return false;
  }
  // The run-queue length the director last heard from each server (-1 when unknown).
  std::map<std::string, double> RunQueues() const {
    std::map<std::string, double> out{{"rs1", -1}, {"rs2", -1}};
    auto m = AdminGet("/metrics");
    if (!m.ok()) return out;
    std::istringstream in(*m);
    for (std::string line; std::getline(in, line);) {
      for (auto& [host, value] : out) {
        const std::string series = "vsc_server_run_queue{server=\"" + host + "\"} ";
        if (line.rfind(series, 0) == 0) value = std::stod(line.substr(series.size()));
      }
    }
    return out;
  }
  // Waits until `busy` reports the burners and `idle` does not; milliseconds it took, or -1.
  int64_t WaitLoaded(const std::string& busy, const std::string& idle) const {
    const auto start = std::chrono::steady_clock::now();
    const bool seen = test_support::WaitUntil(
        [&] {
          auto q = RunQueues();
          return q[busy] >= kBurners && q[idle] >= 0 && q[idle] < kBurners;
        },
        10s, 20ms);
    if (!seen) return -1;
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                                 start)
        .count();
  }

  // `kRequests` GETs through the virtual service, one connection each: count per body.
  std::map<std::string, int> Requests() const {
    std::map<std::string, int> bodies;
    for (int i = 0; i < kRequests; ++i) {
      Result<net::HttpResponse> r = Unavailable("not run");
      Status entered = topo_->RunIn("director", [&] {
        r = net::HttpRequestSync(topo_->Address("director"), kLlVipPort, "GET", "/", "", {}, 5s);
      });
      ++bodies[!entered.ok() ? entered.ToString() : r.ok() ? r->body : r.status().ToString()];
    }
    return bodies;
  }

  // With the burners in `busy`'s cgroup: waits until the director has seen it (`seen_ms`, -1 if
  // never), then returns how many of kRequests new connections went to `idle`.
  int SteeredTo(const std::string& busy, const std::string& idle, int64_t& seen_ms) const {
    seen_ms = WaitLoaded(busy, idle);
    auto q = RunQueues();
    EXPECT_GE(seen_ms, 0) << "the director never saw " << busy << " loaded and " << idle
                          << " not: rs1 " << q["rs1"] << ", rs2 " << q["rs2"];
    if (seen_ms < 0) return 0;
    const auto bodies = Requests();
    q = RunQueues();
    EXPECT_EQ(bodies.size(), 1u) << "answers from more than one place; last heard rs1 " << q["rs1"]
                                 << ", rs2 " << q["rs2"];
    return bodies.contains(idle + "\n") ? bodies.at(idle + "\n") : 0;
  }

  // Spinning shells, bounded at 120 s each (bash's $SECONDS), started in `procs`.
  void StartBurners(const std::string& procs) {
    for (int i = 0; i < kBurners; ++i) {
      SpawnOptions o;
      o.argv = {kBash, "-c", "while [ $SECONDS -lt 120 ]; do :; done"};
      o.cgroup_procs = procs;
      auto p = Subprocess::Spawn(o);
      ASSERT_TRUE(p.ok()) << p.status().ToString();
      burners_.push_back(std::make_unique<Subprocess>(std::move(*p)));
    }
  }
  void MoveBurners(const std::string& procs) const {
    for (const auto& b : burners_) {
      const Status moved = WriteFileText(procs, std::to_string(b->pid()));
      ASSERT_TRUE(moved.ok()) << "cannot move a burner: " << moved.ToString();
    }
  }

  test_support::TempDir dir_;
  std::unique_ptr<NetnsTopology> topo_;
  std::map<std::string, std::unique_ptr<TestCgroup>> cgroups_;
  std::unique_ptr<Subprocess> director_;
  std::vector<std::unique_ptr<Subprocess>> procs_, burners_;
  uint16_t admin_port_ = 0, control_port_ = 0;
  std::string token_;
};

TEST_F(NetnsLlTest, LeastLoadSendsNewConnectionsToTheHostWhoseCgroupRunQueueIsShort) {
  int64_t seen1 = -1, seen2 = -1;
  ASSERT_NO_FATAL_FAILURE(StartBurners(cgroups_["rs1"]->burn_procs()));
  const int to_rs2 = SteeredTo("rs1", "rs2", seen1);
  EXPECT_EQ(to_rs2, kRequests) << "with rs1's cgroup busy, ll sent connections elsewhere";
  ASSERT_NO_FATAL_FAILURE(MoveBurners(cgroups_["rs2"]->burn_procs()));
  const int to_rs1 = SteeredTo("rs2", "rs1", seen2);
  EXPECT_EQ(to_rs1, kRequests) << "with rs2's cgroup busy, ll sent connections elsewhere";
  std::printf(
      "ll: %d/%d new connections to rs2 while rs1's cgroup ran %d burners (seen by the "
      "director %lld ms after they started), %d/%d to rs1 once they moved to rs2's (seen "
      "after %lld ms)\n",
      to_rs2, kRequests, kBurners, static_cast<long long>(seen1), to_rs1, kRequests,
      static_cast<long long>(seen2));
}

}  // namespace
}  // namespace vsc::netns
