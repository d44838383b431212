// The fixture of netns_vrrp_test (what the tests run on is described there): the topology, etcd,
// the two directors with their keepalived, the real servers, and what the tests ask of them.
#pragma once

#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <string>

#include "client/sql_client.h"
#include "integration/etcd_cluster.h"
#include "netns/failover_load.h"
#include "netns/keepalived_host.h"
#include "netns/netns_cluster.h"
#include "realserver/director_list.h"
#ifndef VSC_SOURCE_DIR
#error "VSC_SOURCE_DIR must name the source tree (docs/keepalived/)"
#endif

namespace vsc::netns {

using namespace std::chrono_literals;

inline constexpr const char* kVip = "10.213.0.100";
inline constexpr uint16_t kLookupPort =
    7000;  // the same ports on both directors: the VIP names them
inline constexpr uint16_t kControlPort = 7100;
inline constexpr uint16_t kAdminPort = 7200;  // as in docs/keepalived/*.conf
inline constexpr uint16_t kWritePort = 7300;
inline constexpr uint32_t kTtlMs = 2000;
inline constexpr Duration kVipBound = 2730ms;
// The directors run with floating_vip, so B takes the real servers as soon as the VIP is on its
// host: a server that lost its session tries again every first back-off step, and gives up a
// connect lost in the VIP's move after kSteadyConnectTimeout (DirectorList, steady after a
// loss); then two heartbeat periods (100 ms) make it ACTIVE.
inline constexpr Duration kLookupBound = kVipBound +
                                         realserver::DirectorList::kSteadyConnectTimeout +
                                         realserver::DirectorList::kFirstBackoff + 200ms;
inline const char* const kDirectors[] = {"dira", "dirb"};

inline bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// What `vsc adm` said: its exit code (for role: 0 active, 1 standby, 2 cannot ask) and its
// output's tail.
struct RoleAnswer {
  int exit_code = 2;
  std::string line;
};

// Whether a TCP connect from the calling thread's namespace to host:port completes within
// `timeout` (someone listens there).
inline bool Accepts(const std::string& host, uint16_t port, Duration timeout) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(port);
  ::inet_pton(AF_INET, host.c_str(), &to.sin_addr);
  bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof to) == 0;
  if (!ok && errno == EINPROGRESS) {
    pollfd p{fd, POLLOUT, 0};
    int err = 0;
    socklen_t len = sizeof err;
    ok = ::poll(&p, 1, static_cast<int>(ToMillis(timeout))) == 1 &&
         ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err == 0;
  }
  ::close(fd);
  return ok;
}

class NetnsVrrpTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(::geteuid(), 0u) << "netns_test needs root to create network namespaces";
    ASSERT_FALSE(IpTool().empty()) << "netns_test needs the `ip` tool (apt-get install iproute2)";
    ASSERT_EQ(::access(kKeepalived, X_OK), 0) << kKeepalived << " is missing: scripts/install-deps";
    // Not under /tmp: keepalived's enable_script_security refuses a script below a directory
    // others may write to.
    char tmpl[] = "/run/vsc-vrrp-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr) << "mkdtemp failed";
    dir_ = tmpl;
    auto topo = NetnsTopology::Create({"dira", "dirb", "etcd", "rs1", "rs2", "client"});
    ASSERT_TRUE(topo.ok()) << topo.status().ToString();
    topo_ = std::move(*topo);
    ASSERT_NO_FATAL_FAILURE(Databases());
    ASSERT_NO_FATAL_FAILURE(StartEtcd());
    for (int d = 0; d < 2; ++d) {
      // The standby binds the VIP before it has it, as keepalived setups do.
      auto set = RunIp({"netns", "exec", topo_->Namespace(kDirectors[d]), "sysctl", "-w",
                        "net.ipv4.ip_nonlocal_bind=1"});
      ASSERT_TRUE(set.ok()) << set.status().ToString();
      ASSERT_NO_FATAL_FAILURE(StartDirector(d));
      if (d == 0) {
        ASSERT_TRUE(WaitUntil([&] { return Role(0).exit_code == 0; }, 15s))
            << "A never took the sequencer lease: " << Role(0).line;
      }
    }
    ASSERT_TRUE(WaitUntil([&] { return Contains(Role(1).line, "another director holds"); }, 10s))
        << Role(1).line;
    for (int d = 0; d < 2; ++d) ASSERT_NO_FATAL_FAILURE(StartKeepalived(d));
    ASSERT_TRUE(WaitUntil([&] { return HasVip("dira") && !HasVip("dirb"); }, 15s))
        << "the VIP did not settle on A (the lease holder)";
    for (int i = 0; i < kServers; ++i) ASSERT_NO_FATAL_FAILURE(StartServer(i));
    ASSERT_TRUE(WaitUntil([&] { return ActiveServers(0) == kServers; }, 20s))
        << "the real servers did not register with A through the VIP";
    // A sequences once its promotion wait (1 s after it took the lease) is over and the real
    // servers told it where they stand; until then writes are refused as "promoting".
    ASSERT_TRUE(WaitUntil(
        [&] {
          const RoleAnswer r = Role(0);
          return r.exit_code == 0 && !Contains(r.line, "promoting");
        },
        10s))
        << "A did not finish its promotion: " << Role(0).line;
    Status entered = topo_->RunIn("client", [&] { client_fd_ = ::socket(AF_INET, SOCK_DGRAM, 0); });
    ASSERT_TRUE(entered.ok() && client_fd_ >= 0) << entered.ToString();
  }

  void TearDown() override {
    if (HasFailure() && !dir_.empty()) {
      for (const char* log : {"director-a.log", "director-b.log", "keepalived-a.log",
                              "keepalived-b.log", "notify-a.log", "notify-b.log", "rs1.log"}) {
        std::fprintf(stderr, "---- %s ----\n%s\n", log, Tail(dir_ + "/" + log).c_str());
      }
    }
    // Processes first (a namespace lives on while a process is inside), then the network.
    for (auto& k : keepalived_) k.reset();
    for (auto& s : servers_) s.reset();
    for (auto& d : directors_) d.reset();
    etcd_.reset();
    if (client_fd_ >= 0) ::close(client_fd_);
    topo_.reset();
    if (!dir_.empty()) {  // in /run (memory); the logs that matter were printed above
      std::error_code ec;
      std::filesystem::remove_all(dir_, ec);
    }
  }

  void Databases() {
    store::BuildOptions bo;
    bo.path = dir_ + "/resources.db";
    bo.records = kRecords;
    auto built = store::BuildResourceDb(bo, {});
    ASSERT_TRUE(built.ok()) << built.status().ToString();
    for (const char* copy : {"rs1.db", "rs2.db", "schema-a.db", "schema-b.db"}) {
      std::error_code ec;
      std::filesystem::copy_file(bo.path, dir_ + "/" + copy, ec);
      ASSERT_FALSE(ec) << ec.message();
    }
    auto key = proto::ClusterKey::Generate();
    ASSERT_TRUE(key.ok() && key->WriteFile(dir_ + "/cluster.key").ok());
  }

  void StartEtcd() {
    integration::EtcdPlacement where;
    where.host = topo_->Address("etcd");
    where.first_port = 2379;
    where.exec_prefix = {IpTool(), "netns", "exec", topo_->Namespace("etcd")};
    where.run_in = [this](const std::function<void()>& fn) { return topo_->RunIn("etcd", fn); };
    std::filesystem::create_directories(dir_ + "/etcd");
    auto etcd = integration::EtcdCluster::Start(dir_ + "/etcd", 3, 20s, where);
    ASSERT_TRUE(etcd.ok()) << etcd.status().ToString();
    etcd_ = std::move(*etcd);
  }

  static std::string Suffix(int d) { return d == 0 ? "a" : "b"; }
  std::string TokenFile(int d) const { return dir_ + "/admin-" + Suffix(d) + ".token"; }

  void StartDirector(int d) {
    const std::string s = Suffix(d);
    auto port = [](uint16_t p) { return std::to_string(p); };
    std::vector<std::string> args = {"director",
                                     "--listen",
                                     kVip,
                                     "--floating-vip",
                                     "--key-file",
                                     dir_ + "/cluster.key",
                                     "--lookup-port",
                                     port(kLookupPort),
                                     "--control-port",
                                     port(kControlPort),
                                     "--heartbeat-port",
                                     port(kControlPort + 1),
                                     "--admin-port",
                                     port(kAdminPort),
                                     "--write-port",
                                     port(kWritePort),
                                     "--sql-port",
                                     port(kWritePort + 1),
                                     "--ring-port",
                                     "7400",
                                     "--http-port",
                                     "7500",
                                     "--workers",
                                     "1",
                                     "--heartbeat-interval-ms",
                                     "100",
                                     "--schema-db",
                                     dir_ + "/schema-" + s + ".db",
                                     "--log-file",
                                     dir_ + "/log-" + s + ".db",
                                     "--admin-token-file",
                                     TokenFile(d),
                                     "--cluster-name",
                                     "vrrp-test",
                                     "--sequencer-lease-ttl-ms",
                                     std::to_string(kTtlMs),
                                     "--etcd-timeout-ms",
                                     "500"};
    for (const std::string& url : etcd_->ClientUrls())
      args.insert(args.end(), {"--etcd-endpoints", url});
    auto ready = SpawnVsc(*topo_, kDirectors[d], args, dir_, "director-" + s, directors_[d]);
    ASSERT_TRUE(ready.ok()) << ready.status().ToString();
  }

  void StartServer(int i) {
    const std::string host = ServerHost(i);
    auto ready =
        SpawnVsc(*topo_, host,
                 {"realserver", "--id", host, "--listen", topo_->Address(host), "--director",
                  std::string(kVip) + ":" + std::to_string(kControlPort), "--trusted-forwarders",
                  kVip, "--key-file", dir_ + "/cluster.key", "--db", dir_ + "/" + host + ".db",
                  "--workers", "1", "--lookup-port", "0", "--http-port", "0"},
                 dir_, host, servers_[i]);
    ASSERT_TRUE(ready.ok()) << ready.status().ToString();
  }

  // keepalived-a.conf / -b.conf and vsc-notify as shipped, for this network and these paths.
  void StartKeepalived(int d) {
    const std::string s = Suffix(d);
    const std::string docs = std::string(VSC_SOURCE_DIR) + "/docs/keepalived/";
    const std::string notify = dir_ + "/vsc-notify-" + s;
    const Replacements paths = {{"/usr/local/bin/vsc", VSC_BINARY},
                                {"/etc/vsc/admin.token", TokenFile(d)}};
    Replacements script = paths;
    script.emplace_back("/var/log/vsc-keepalived.log", dir_ + "/notify-" + s + ".log");
    ASSERT_TRUE(Render(docs + "vsc-notify", script, notify, std::filesystem::perms(0755)).ok());
    Replacements conf = {{"10.0.0.100", kVip},
                         {"10.0.0.11", topo_->Address("dira")},
                         {"10.0.0.12", topo_->Address("dirb")},
                         {"/etc/keepalived/vsc-notify", notify}};
    conf.insert(conf.end(), paths.begin(), paths.end());
    const std::string file = dir_ + "/keepalived-" + s + ".conf";
    Status r = Render(docs + "keepalived-" + s + ".conf", conf, file, std::filesystem::perms(0644));
    ASSERT_TRUE(r.ok()) << r.ToString();
    auto k = KeepalivedHost::Start(*topo_, kDirectors[d], file, dir_, "keepalived-" + s);
    ASSERT_TRUE(k.ok()) << k.status().ToString();
    keepalived_[d] = std::move(*k);
  }

  bool HasVip(const std::string& host) const {
    auto out = RunIp({"-n", topo_->Namespace(host), "-4", "-o", "addr", "show", "dev", "eth0"});
    return out.ok() && Contains(*out, std::string(" ") + kVip + "/");
  }

  // `vsc adm SUBCOMMAND` run inside director d's namespace, as keepalived runs its scripts: the
  // exit code (2 when it could not run or did not end within `timeout`) and its output.
  RoleAnswer Adm(int d, const std::string& subcommand, Duration timeout) const {
    SpawnOptions so;
    so.argv = {IpTool(),       "netns",      "exec",         topo_->Namespace(kDirectors[d]),
               VSC_BINARY,     "adm",        "--admin-port", std::to_string(kAdminPort),
               "--token-file", TokenFile(d), subcommand};
    so.log_path = dir_ + "/" + subcommand + "-" + Suffix(d) + ".out";
    std::error_code ec;
    std::filesystem::remove(so.log_path, ec);
    auto p = Subprocess::Spawn(so);
    if (!p.ok()) return {2, p.status().ToString()};
    auto code = p->Wait(timeout);
    std::string line = Tail(so.log_path);
    while (!line.empty() && line.back() == '\n') line.pop_back();
    return {code.value_or(2), line};
  }
  RoleAnswer Role(int d) const { return Adm(d, "role", 5s); }

  int ActiveServers(int d) const {
    Result<net::HttpResponse> r = Unavailable("not asked");
    std::string token;
    std::ifstream(TokenFile(d)) >> token;
    Status entered = topo_->RunIn(kDirectors[d], [&] {
      r = net::HttpRequestSync("127.0.0.1", kAdminPort, "GET", "/v1/status", "",
                               {{"Authorization", "Bearer " + token}}, 2s);
    });
    if (!entered.ok() || !r.ok() || r->status != 200) return -1;
    int n = 0;
    for (int i = 0; i < kServers; ++i) n += StateOf(r->body, ServerHost(i)) == "ACTIVE";
    return n;
  }

  // One UPDATE from the client through the VIP's write port: "ok" or the error, and its seq.
  struct Written {
    std::string outcome;
    uint64_t seq = 0;
  };
  // `timeout` bounds the connect and the wait for the answer.
  Written WriteThroughVip(
      const std::string& sql = "UPDATE resources SET size = size + 1 WHERE id = 7",
      Duration timeout = 3s) {
    std::string outcome = "not run";
    uint64_t seq = 0;
    Status entered = topo_->RunIn("client", [&] {
      auto key = proto::ClusterKey::FromFile(dir_ + "/cluster.key");
      if (!key.ok()) return void(outcome = key.status().ToString());
      auto w = client::WriteClient::Connect(kVip, kWritePort, *key, timeout);
      if (!w.ok()) return void(outcome = w.status().ToString());
      auto r = w->Execute({client::MakeStatement(sql)});
      if (!r.ok()) return void(outcome = r.status().ToString());
      outcome = r->ok() ? "ok" : r->error();
      seq = r->seq();
    });
    return entered.ok() ? Written{outcome, seq} : Written{entered.ToString(), 0};
  }

  // `n` writes through the VIP, each acknowledged (a failure otherwise): the last one's seq.
  uint64_t WriteAckedThroughVip(int n) {
    uint64_t last = 0;
    for (int i = 0; i < n; ++i) {
      Written w = WriteThroughVip();
      EXPECT_EQ(w.outcome, "ok") << "write " << i;
      last = w.seq;
    }
    return last;
  }

  // The first write through the VIP that commits, tried for `timeout` (its outcome says the last
  // error when none did).
  Written FirstWriteThroughVip(Duration timeout) {
    Written first;
    WaitUntil(
        [&] {
          first = WriteThroughVip();
          return first.outcome == "ok";
        },
        timeout);
    return first;
  }

  // `vsc adm verify` in director d's namespace: every replica's checksum at one marker agrees.
  bool VerifyOk(int d) const {
    const RoleAnswer a = Adm(d, "verify", 15s);
    if (a.exit_code != 0)
      std::printf("vsc adm verify (exit %d): %s\n", a.exit_code, a.line.c_str());
    return a.exit_code == 0;
  }

  // Stops `load` and checks what its writers were told against each replica's file: every
  // acknowledged row is there, and no other (a retry with the same key applied nothing).
  void ExpectEveryAckedWriteOnceInEveryReplica(FailoverLoad& load) {
    ::poll(nullptr, 0, 1000);  // writes through B for a while
    load.Stop();
    const std::set<std::string> acked = load.AckedKeys();
    for (int w = 0; w < kFailoverWriters; ++w) {
      std::string errors;
      for (const auto& [why, n] : load.writer(w).errors)
        errors += " " + why + " x" + std::to_string(n);
      std::printf("writer %d: %zu acknowledged, %llu retries answered as duplicates; retried:%s\n",
                  w, load.writer(w).acked.size(),
                  static_cast<unsigned long long>(load.writer(w).duplicates), errors.c_str());
    }
    std::printf("lookups under the failover: %llu answered, %llu not; longest gap %.0f ms\n",
                static_cast<unsigned long long>(load.lookups_answered()),
                static_cast<unsigned long long>(load.lookups_unanswered()),
                ToMillis(load.longest_lookup_gap()));
    EXPECT_LT(load.longest_lookup_gap(), kLookupBound);
    const std::vector<std::string> wrong = load.wrong_answers();
    EXPECT_TRUE(wrong.empty()) << wrong.size() << " wrong answers, the first: " << wrong.front();
    for (int i = 0; i < kServers; ++i) {
      const std::string db = dir_ + "/" + ServerHost(i) + ".db";
      ASSERT_TRUE(WaitUntil(
          [&] {
            auto keys = KeysInReplica(db);
            return keys.ok() && *keys == acked;
          },
          10s))
          << ServerHost(i) << " holds other rows than the " << acked.size() << " acknowledged";
    }
  }

  // Drops every packet between director host A and the etcd host (both ways), or stops doing so:
  // A stays reachable from the clients and the real servers.
  Status CutAFromEtcd(bool cut) {
    const std::string etcd = topo_->Address("etcd");
    for (const char* chain : {"OUTPUT", "INPUT"}) {
      auto r = RunIp({"netns", "exec", topo_->Namespace("dira"), "iptables", cut ? "-A" : "-D",
                      chain, std::string(chain) == "OUTPUT" ? "-d" : "-s", etcd, "-j", "DROP"});
      if (!r.ok()) return r.status();
    }
    return Status::Ok();
  }

  // Whether a director accepts the client's TCP connection at VIP:lookup port within `timeout`.
  bool VipAccepts(Duration timeout) const {
    bool ok = false;
    Status entered = topo_->RunIn("client", [&] { ok = Accepts(kVip, kLookupPort, timeout); });
    return entered.ok() && ok;
  }

  Answer Lookup(Duration timeout) {
    return LookupVia(client_fd_, kVip, kLookupPort, ++next_request_id_, random_, timeout);
  }

  std::string dir_;
  std::unique_ptr<NetnsTopology> topo_;
  std::unique_ptr<integration::EtcdCluster> etcd_;
  std::unique_ptr<Subprocess> directors_[2];
  std::unique_ptr<KeepalivedHost> keepalived_[2];
  std::unique_ptr<Subprocess> servers_[kServers];
  int client_fd_ = -1;
  uint64_t next_request_id_ = 0;
  Random random_{20261202};
};

}  // namespace vsc::netns
