// State sync between two real `vsc director` processes (issue 11): a persistent TCP service on
// the same address on both (SO_REUSEPORT lets the kernel spread new connections over the two
// processes, as a VIP would lead them to one or the other over time), each naming the other in
// sync_peers. A client sent to a server through either director keeps that server after a
// kill -9 of the other one; 1,000 new clients cost about one record each on the wire.
#include <poll.h>
#include <signal.h>

#include <cctype>
#include <cstdio>
#include <map>

#include "integration/services_cli_fixture.h"
#include "support/tcp_request.h"
#include "unit/director/probe_servers.h"

namespace vsc::integration {
namespace {

using director::testing::TcpTestServer;

// One request from the source address 127.0.0.`host`: the name of the server that answered.
std::string RequestFrom(uint8_t host, uint16_t port) {
  return test_support::TcpRequest(port, "ping", 0x7f000000u | host);
}

class ServicesSyncTest : public ::testing::Test {
 protected:
  struct Node {
    std::string dir;
    std::optional<Subprocess> process;
    uint16_t admin_port = 0;
    uint16_t sync_port = 0;
    std::pair<int, std::string> Adm(const std::vector<std::string>& args) const {
      return RunAdm(dir, admin_port, dir + "/director-admin.token", args);
    }
    double Metric(const std::string& series) const {
      std::string token = ReadFile(dir + "/director-admin.token");
      while (!token.empty() && std::isspace(static_cast<unsigned char>(token.back()))) {
        token.pop_back();
      }
      auto r = AdminHttpGet(admin_port, "/metrics", token, 5s);
      if (!r.ok() || r->first != 200) return -1;
      auto v = MetricValue(r->second, series);
      return v.ok() ? *v : -1;
    }
  };

  void SetUp() override {
    servers_ = std::make_unique<std::thread>([this] { io_.run(); });
    for (const char* name : {"A", "B", "C"}) {
      backends_.push_back(
          std::make_unique<TcpTestServer>(io_, TcpTestServer::Mode::kRespond, name));
    }
    vport_ = FreePort<asio::ip::tcp>();
    nodes_[0].sync_port = FreePort<asio::ip::udp>();
    nodes_[1].sync_port = FreePort<asio::ip::udp>();
    for (int i = 0; i < 2; ++i) StartNode(i, nodes_[1 - i].sync_port);
  }

  void TearDown() override {
    work_.reset();
    io_.stop();
    servers_->join();
  }

  void StartNode(int i, uint16_t peer_sync_port) {
    Node& n = nodes_[i];
    n.dir = MakeTempDir("vsc-sync");
    std::ofstream cfg(n.dir + "/d.toml");
    cfg << "[director]\ninsecure = true\nlookup_port = 0\ncontrol_port = 0\nheartbeat_port = 0\n"
        << "admin_port = 0\nring_port = 0\nhttp_port = 0\nworkers = 2\n"
        << "ready_file = \"ready.json\"\nsync_port = " << n.sync_port
        << "\nsync_peers = [\"127.0.0.1:" << peer_sync_port << "\"]\n\n"
        << "[[service]]\nprotocol = \"tcp\"\naddress = \"127.0.0.1:" << vport_
        << "\"\nlb_algo = \"rr\"\npersistence_timeout = 300\n";
    for (const auto& b : backends_) {
      cfg << "[[service.server]]\naddress = \"127.0.0.1:" << b->endpoint().port() << "\"\n"
          << "[service.server.check]\ntype = \"TCP_CHECK\"\ndelay_loop = \"600s\"\n";
    }
    cfg.close();
    SpawnOptions so;
    so.argv = {VSC_BINARY, "director", "--config", n.dir + "/d.toml"};
    so.cwd = n.dir;
    so.log_path = n.dir + "/director.log";
    auto proc = Subprocess::Spawn(so);
    ASSERT_TRUE(proc.ok()) << proc.status().ToString();
    n.process.emplace(std::move(proc).value());
    auto ready = WaitForFile(n.dir + "/ready.json", 20s, &*n.process);
    ASSERT_TRUE(ready.ok()) << ready.status().ToString() << ReadFile(so.log_path);
    auto j = nlohmann::json::parse(*ready);
    n.admin_port = j.at("admin_port").get<uint16_t>();
    EXPECT_EQ(j.at("sync_port").get<uint16_t>(), n.sync_port);
    ASSERT_TRUE(WaitUntil(
        [&] {
          const std::string listing = n.Adm({"-L", "-n"}).second;
          size_t up = 0;
          for (size_t at = listing.find(" UP"); at != std::string::npos;
               at = listing.find(" UP", at + 1)) {
            ++up;
          }
          return up >= backends_.size();
        },
        20s, 100ms))
        << n.Adm({"-L", "-n"}).second;
  }

  double Adopted(int i) const {
    return nodes_[i].Metric("vsc_director_sync_records_total{event=\"adopted\"}");
  }

  asio::io_context io_;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work_{
      asio::make_work_guard(io_)};
  std::vector<std::unique_ptr<TcpTestServer>> backends_;
  std::unique_ptr<std::thread> servers_;
  uint16_t vport_ = 0;
  Node nodes_[2];
};

TEST_F(ServicesSyncTest, AClientKeepsItsServerAfterTheDirectorThatChoseItIsKilled) {
  constexpr uint8_t kFirst = 10, kClients = 24;
  std::map<uint8_t, std::string> first;
  for (uint8_t h = kFirst; h < kFirst + kClients; ++h) {
    first[h] = RequestFrom(h, vport_);
    ASSERT_FALSE(first[h].empty()) << "127.0.0." << int(h);
  }
  // Each client's template was recorded by the director that took its connection and adopted
  // by the other: 24 in all, whichever way the kernel spread them.
  ASSERT_TRUE(WaitUntil([&] { return Adopted(0) + Adopted(1) >= kClients; }, 10s, 50ms))
      << Adopted(0) << " + " << Adopted(1);
  EXPECT_GT(Adopted(1), 0) << "no client went through director 0";
  const std::string listing = nodes_[1].Adm({"-L", "-c", "-n"}).second;
  EXPECT_NE(ConnectionLine(listing, {"NONE", "127.0.0." + std::to_string(kFirst)}), "") << listing;

  ASSERT_EQ(::kill(nodes_[0].process->pid(), SIGKILL), 0);
  (void)nodes_[0].process->Wait(10s);
  std::map<std::string, int> servers;
  for (uint8_t h = kFirst; h < kFirst + kClients; ++h) {
    EXPECT_EQ(RequestFrom(h, vport_), first[h]) << "127.0.0." << int(h);
    ++servers[first[h]];
  }
  EXPECT_EQ(servers.size(), 3u);  // rr spread them: a server kept is not a coincidence
  EXPECT_EQ(nodes_[1].Metric("vsc_director_sync_records_total{event=\"ignored\"}"), 0);
}

// The sync's cost on the wire under real traffic (issue 11's benchmark figure, checked here
// against the micro benchmark's 36.5 bytes a client): 1,000 new persistent clients in about a
// second, each from an address of its own, one connection each. Each client's template goes to the other director
// once, and the bytes both directors sent, envelopes included, stay near one record a client.
TEST_F(ServicesSyncTest, EachNewClientIsSentOnceAtAboutOneRecordOnTheWire) {
  constexpr int kClients = 1000;
  RealClock clock;
  const TimePoint start = clock.Now();
  for (int c = 0; c < kClients; ++c) {
    // At 1,000 new clients a second (the rate the figure is quoted for): client c starts at c ms.
    const TimePoint due = start + std::chrono::milliseconds(c);
    while (clock.Now() < due) ::poll(nullptr, 0, 1);
    const uint32_t source = 0x7f010000u | static_cast<uint32_t>(c + 1);  // 127.1.0.1 onwards
    ASSERT_FALSE(test_support::TcpRequest(vport_, "ping", source).empty()) << "client " << c;
  }
  const double seconds = ToMillis(clock.Now() - start) / 1000;
  ASSERT_TRUE(WaitUntil([&] { return Adopted(0) + Adopted(1) >= kClients; }, 20s, 50ms))
      << Adopted(0) << " + " << Adopted(1);
  auto sum = [&](const std::string& series) {
    return nodes_[0].Metric(series) + nodes_[1].Metric(series);
  };
  EXPECT_EQ(sum("vsc_director_sync_records_total{event=\"sent\"}"), kClients);
  EXPECT_EQ(Adopted(0) + Adopted(1), kClients);
  EXPECT_EQ(sum("vsc_director_sync_records_total{event=\"dropped\"}"), 0);
  const double bytes = sum("vsc_director_sync_bytes_total{direction=\"sent\"}");
  const double datagrams = sum("vsc_director_sync_datagrams_total{event=\"sent\"}");
  std::printf(
      "state sync: %d new persistent clients in %.2f s (%.0f/s): %.0f bytes in %.0f datagrams, "
      "%.1f bytes a client, so %.1f KB/s per 1,000 new clients/s\n",
      kClients, seconds, kClients / seconds, bytes, datagrams, bytes / kClients, bytes / kClients);
  EXPECT_GT(bytes / kClients, 20.0);  // a record: client, service, destination, expiry
  EXPECT_LT(bytes / kClients, 60.0);  // batched: the envelope is shared by many records
}

}  // namespace
}  // namespace vsc::integration
