// NetnsClusterTest: the fixture of the multi-host tests that run a vsc cluster across network
// namespaces (netns_test.cc, netns_ring_test.cc). The director, two real servers (rs1, rs2, with
// the clip relay on, so they are ring nodes too) and a client each in their own namespace on a
// private bridge (10.213.0.0/24, which exists only inside the namespaces). Every process is
// started with `ip netns exec NS vsc ...`; the admin API is reached from inside the director's
// namespace.
//
// Needs root (CI runs as root). Without it, or when namespaces cannot be created, the tests FAIL
// with the reason: a silently skipped multi-host test would prove nothing.
#pragma once

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/random.h"
#include "common/subprocess.h"
#include "net/http_client.h"
#include "netns/netns_topology.h"
#include "proto/cluster_key.h"
#include "proto/lookup_codec.h"
#include "store/resource_builder.h"
#ifndef VSC_BINARY
#error "VSC_BINARY must name the vsc executable"
#endif

namespace vsc::netns {

inline constexpr uint64_t kRecords = 20'000;
inline constexpr int kServers = 2;

// A real server's host name in the topology and its id in the cluster.
inline std::string ServerHost(int i) { return "rs" + std::to_string(i + 1); }

// Waits until `done()` holds or `timeout` passes, polling every 20 ms. Returns done()'s last value.
inline bool WaitUntil(const std::function<bool()>& done, Duration timeout) {
  RealClock clock;
  const TimePoint deadline = clock.Now() + timeout;
  for (;;) {
    if (done()) return true;
    if (clock.Now() >= deadline) return false;
    ::poll(nullptr, 0, 20);
  }
}

// The value of one Prometheus series ("name" or "name{labels}" spelled exactly as exported).
inline std::optional<double> Metric(const std::string& text, const std::string& series) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.size() > series.size() && line.compare(0, series.size(), series) == 0 &&
        line[series.size()] == ' ') {
      return std::strtod(line.c_str() + series.size() + 1, nullptr);
    }
  }
  return std::nullopt;
}

inline std::string Tail(const std::string& path, size_t max_bytes = 3000) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string s = ss.str();
  return s.size() > max_bytes ? "..." + s.substr(s.size() - max_bytes) : s;
}

// Starts `vsc ARGS --ready-file DIR/NAME.ready --log-level info` inside the host's namespace
// (log DIR/NAME.log) into `out`, and waits for the ready file: its text, or why not (with the
// log's tail).
inline Result<std::string> SpawnVsc(const NetnsTopology& topo, const std::string& host,
                                    std::vector<std::string> args, const std::string& dir,
                                    const std::string& name, std::unique_ptr<Subprocess>& out) {
  const std::string ready = dir + "/" + name + ".ready";
  std::error_code ec;
  std::filesystem::remove(ready, ec);  // a restart waits for its own
  SpawnOptions so;
  so.argv = {IpTool(), "netns", "exec", topo.Namespace(host), VSC_BINARY};
  so.argv.insert(so.argv.end(), args.begin(), args.end());
  so.argv.insert(so.argv.end(), {"--ready-file", ready, "--log-level", "info"});
  so.log_path = dir + "/" + name + ".log";
  auto proc = Subprocess::Spawn(so);
  if (!proc.ok()) return proc.status();
  out = std::make_unique<Subprocess>(std::move(*proc));
  auto text = WaitForFile(ready, std::chrono::seconds(15), out.get());
  if (!text.ok()) {
    return text.status().Annotate("starting " + name + ": " + Tail(so.log_path));
  }
  return text;
}

// State of a real server in /v1/status (the UDP service's listing), "" when unlisted.
inline std::string StateOf(const std::string& status_json, const std::string& id) {
  auto j = nlohmann::json::parse(status_json, nullptr, false);
  if (j.is_discarded() || !j.contains("services")) return "";
  for (const auto& s : j["services"].at(0).at("servers")) {
    if (s.value("id", "") == id) return s.value("state", "");
  }
  return "";
}

// Outcome of one lookup as the client saw it.
struct Answer {
  bool answered = false;
  std::string from;     // "address:port" of the answer's source
  std::string problem;  // non-empty when the answer was wrong
};

// Sends one lookup of 1-10 random ids from `fd` (a UDP socket) to host:port and waits up to
// `timeout` for its answer, checking it against the deterministic database (ids 1..kRecords
// exist). The answer may come from any address (dr: straight from a real server).
inline Answer LookupVia(int fd, const std::string& host, uint16_t port, uint64_t request_id,
                        Random& random, Duration timeout) {
  std::vector<uint64_t> ids(1 + random.Uniform(proto::kMaxLookupIds));
  // A tenth of the ids lie beyond the database, so "not found" is exercised as well.
  for (auto& id : ids) id = 1 + random.Uniform(kRecords + kRecords / 10);
  auto request = proto::LookupRequest::Of(request_id, ids);
  std::array<uint8_t, proto::kMaxRequestSize> buf;
  const size_t len = proto::EncodeRequest(request, buf);
  sockaddr_in director{};
  director.sin_family = AF_INET;
  director.sin_port = htons(port);
  ::inet_pton(AF_INET, host.c_str(), &director.sin_addr);
  Answer a;
  if (::sendto(fd, buf.data(), len, 0, reinterpret_cast<sockaddr*>(&director), sizeof director) !=
      static_cast<ssize_t>(len)) {
    a.problem = std::string("sendto: ") + std::strerror(errno);
    return a;
  }
  RealClock clock;
  const TimePoint deadline = clock.Now() + timeout;
  std::array<uint8_t, proto::kMaxLookupDatagram> in;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock.Now());
    if (left.count() <= 0) return a;
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left.count()) + 1) <= 0) continue;
    sockaddr_in from{};
    socklen_t from_len = sizeof from;
    ssize_t n =
        ::recvfrom(fd, in.data(), in.size(), 0, reinterpret_cast<sockaddr*>(&from), &from_len);
    if (n <= 0) continue;
    auto response = proto::DecodeResponse(std::span<const uint8_t>(in.data(), n));
    if (!response.ok()) {
      a.answered = true;
      a.problem = "undecodable answer: " + response.status().ToString();
      return a;
    }
    if (response->request_id != request_id) continue;  // a late answer to an earlier try
    char addr[INET_ADDRSTRLEN];
    ::inet_ntop(AF_INET, &from.sin_addr, addr, sizeof addr);
    a.answered = true;
    a.from = std::string(addr) + ":" + std::to_string(ntohs(from.sin_port));
    if (response->status != proto::LookupStatus::kOk) {
      a.problem = "status " + std::string(proto::LookupStatusName(response->status));
    } else if (response->answers.size() != ids.size()) {
      a.problem = "answer count " + std::to_string(response->answers.size());
    } else {
      for (size_t i = 0; i < ids.size(); ++i) {
        const auto& ans = response->answers[i];
        if (ans.id != ids[i] || ans.found != (ids[i] <= kRecords) ||
            ans.found == ans.node.empty()) {
          a.problem = "wrong answer for id " + std::to_string(ids[i]);
        }
      }
    }
    return a;
  }
}

class NetnsClusterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(::geteuid(), 0u)
        << "netns_test needs root to create network namespaces (run it as root, as CI does); "
           "it fails rather than skips so a missing multi-host check is never mistaken for a pass";
    ASSERT_FALSE(IpTool().empty()) << "netns_test needs the `ip` tool (apt-get install iproute2)";
    char tmpl[] = "/tmp/vsc-netns-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr) << "mkdtemp failed";
    dir_ = tmpl;

    auto topo = NetnsTopology::Create({"director", "rs1", "rs2", "client"});
    ASSERT_TRUE(topo.ok()) << "cannot build the test network (needs root, CAP_NET_ADMIN and "
                              "network namespace support): "
                           << topo.status().ToString();
    topo_ = std::move(*topo);

    store::BuildOptions bo;
    bo.path = dir_ + "/resources.db";
    bo.records = kRecords;
    auto built = store::BuildResourceDb(bo, {});
    ASSERT_TRUE(built.ok()) << built.status().ToString();
    for (int i = 0; i < kServers; ++i) {  // a database belongs to one real server
      std::error_code ec;
      std::filesystem::copy_file(bo.path, dir_ + "/" + ServerHost(i) + ".db", ec);
      ASSERT_FALSE(ec) << ec.message();
    }
    auto key = proto::ClusterKey::Generate();
    ASSERT_TRUE(key.ok()) << key.status().ToString();
    ASSERT_TRUE(key->WriteFile(dir_ + "/cluster.key").ok());

    ASSERT_NO_FATAL_FAILURE(StartDirector());
    for (int i = 0; i < kServers; ++i) ASSERT_NO_FATAL_FAILURE(StartServer(i));
    std::string last;
    bool active = WaitUntil(
        [&] {
          auto status = AdminGet("/v1/status");
          if (!status.ok()) return false;
          last = *status;
          return StateOf(*status, "rs1") == "ACTIVE" && StateOf(*status, "rs2") == "ACTIVE";
        },
        std::chrono::seconds(20));
    ASSERT_TRUE(active) << "real servers did not become ACTIVE; last /v1/status: " << last;
    ASSERT_NO_FATAL_FAILURE(OpenClientSocket());
  }

  void TearDown() override {
    if (HasFailure() && !dir_.empty()) {
      for (const char* log : {"director.log", "rs1.log", "rs2.log"}) {
        std::fprintf(stderr, "---- %s ----\n%s\n", log, Tail(dir_ + "/" + log).c_str());
      }
    }
    // Processes first (a namespace lives on while a process is inside), then the network.
    for (auto& s : servers_) s.reset();
    director_.reset();
    if (client_fd_ >= 0) ::close(client_fd_);
    topo_.reset();
    if (!dir_.empty()) {
      std::error_code ec;
      std::filesystem::remove_all(dir_, ec);
    }
  }

  // Starts `vsc ARGS` inside the host's namespace and waits for its ready file.
  void Spawn(const std::string& host, std::vector<std::string> args, const std::string& name,
             std::unique_ptr<Subprocess>& out, std::string& ready_text) {
    auto text = SpawnVsc(*topo_, host, std::move(args), dir_, name, out);
    ASSERT_TRUE(text.ok()) << text.status().ToString();
    ready_text = *text;
  }

  static uint16_t Port(const std::string& ready, const std::string& field) {
    const std::string k = "\"" + field + "\"";
    size_t at = ready.find(k);
    if (at == std::string::npos) return 0;
    at = ready.find(':', at);
    return at == std::string::npos ? 0 : static_cast<uint16_t>(std::atoi(ready.c_str() + at + 1));
  }

  void StartDirector() {
    std::string ready;
    ASSERT_NO_FATAL_FAILURE(Spawn("director",
                                  {"director",
                                   "--listen",
                                   topo_->Address("director"),
                                   "--key-file",
                                   dir_ + "/cluster.key",
                                   "--lookup-port",
                                   "0",
                                   "--control-port",
                                   "0",
                                   "--heartbeat-port",
                                   "0",
                                   "--admin-port",
                                   "0",
                                   "--ring-port",
                                   "0",
                                   "--admin-token-file",
                                   dir_ + "/admin.token",
                                   "--workers",
                                   "1",
                                   "--scheduler",
                                   "rr",
                                   "--heartbeat-interval-ms",
                                   "100",
                                   "--silent-after",
                                   "2",
                                   "--down-after",
                                   "5"},
                                  "director", director_, ready));
    lookup_port_ = Port(ready, "lookup_port");
    control_port_ = Port(ready, "control_port");
    admin_port_ = Port(ready, "admin_port");
    ring_port_ = Port(ready, "ring_port");
    ASSERT_NE(lookup_port_, 0) << ready;
    ASSERT_NE(ring_port_, 0) << ready;
    ASSERT_NE(control_port_, 0) << ready;
    ASSERT_NE(admin_port_, 0) << ready;
    std::ifstream in(dir_ + "/admin.token");
    std::getline(in, token_);
    ASSERT_FALSE(token_.empty()) << "the director wrote no admin token";
  }

  void StartServer(int i) {
    const std::string host = ServerHost(i);
    std::string ready;
    ASSERT_NO_FATAL_FAILURE(Spawn(host,
                                  {"realserver",
                                   "--id",
                                   host,
                                   "--listen",
                                   topo_->Address(host),
                                   "--director",
                                   topo_->Address("director") + ":" + std::to_string(control_port_),
                                   "--key-file",
                                   dir_ + "/cluster.key",
                                   "--db",
                                   dir_ + "/" + host + ".db",
                                   "--workers",
                                   "1",
                                   "--lookup-port",
                                   "0",
                                   "--http-port",
                                   "0",
                                   "--relay",
                                   "--relay-port",
                                   "0"},
                                  host, servers_[i], ready));
    server_ports_[i] = Port(ready, "lookup_port");
    relay_ports_[i] = Port(ready, "relay_port");
    http_ports_[i] = Port(ready, "http_port");
    ASSERT_NE(server_ports_[i], 0) << ready;
    ASSERT_NE(relay_ports_[i], 0) << ready;
    ASSERT_NE(http_ports_[i], 0) << ready;
  }

  // GET on the director's admin API, which listens on loopback inside the director's namespace.
  Result<std::string> AdminGet(const std::string& target) {
    Result<net::HttpResponse> r = Unavailable("not run");
    Status entered = topo_->RunIn("director", [&] {
      r = net::HttpRequestSync("127.0.0.1", admin_port_, "GET", target, "",
                               {{"Authorization", "Bearer " + token_}}, std::chrono::seconds(5));
    });
    if (!entered.ok()) return entered;
    if (!r.ok()) return r.status();
    if (r->status != 200)
      return Unavailable("GET " + target + ": HTTP " + std::to_string(r->status));
    return r->body;
  }

  Result<std::string> Metrics() { return AdminGet("/metrics"); }

  // A UDP socket created inside the client's namespace; the test thread then uses it directly.
  void OpenClientSocket() {
    Status entered = topo_->RunIn("client", [&] { client_fd_ = ::socket(AF_INET, SOCK_DGRAM, 0); });
    ASSERT_TRUE(entered.ok()) << entered.ToString();
    ASSERT_GE(client_fd_, 0) << "socket: " << std::strerror(errno);
  }

  std::string ServerEndpoint(int i) const {
    return topo_->Address(ServerHost(i)) + ":" + std::to_string(server_ports_[i]);
  }

  // One lookup to the director (LookupVia), checked against the deterministic database.
  Answer Lookup(Duration timeout) {
    return LookupVia(client_fd_, topo_->Address("director"), lookup_port_, ++next_request_id_,
                     random_, timeout);
  }

  std::string dir_;
  std::unique_ptr<NetnsTopology> topo_;
  std::string token_;
  uint16_t lookup_port_ = 0, control_port_ = 0, admin_port_ = 0, ring_port_ = 0;
  std::array<uint16_t, kServers> server_ports_{};  // lookup
  std::array<uint16_t, kServers> relay_ports_{}, http_ports_{};
  int client_fd_ = -1;
  uint64_t next_request_id_ = 0;
  Random random_{20260213};
  std::unique_ptr<Subprocess> director_;
  std::array<std::unique_ptr<Subprocess>, kServers> servers_;
};

}  // namespace vsc::netns
