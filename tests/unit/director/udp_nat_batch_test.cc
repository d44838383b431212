// UdpNatService's batched path over real loopback sockets (issue 12, benchmark 4), the service
// built directly on one io_context with a manual clock: many clients' datagrams taken in one
// recvmmsg each reach their own session and get their own replies, one sendmmsg per session; a
// batch that finds a session expired (not yet swept) closes it and opens a new one while live
// sessions in the same batch go on; one-packet scheduling schedules every datagram of a batch
// on its own; Stop closes the sessions.
#include <gtest/gtest.h>
#include <linux/sock_diag.h>
#include <sys/socket.h>

#include <asio.hpp>
#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/clock.h"
#include "director/service_view_builder.h"
#include "director/udp_nat_service.h"
#include "probe_servers.h"
#include "support/wait_until.h"

namespace vsc::director {
namespace {

using namespace std::chrono_literals;
using asio::ip::udp;

const asio::ip::address kLoopback = asio::ip::address_v4::loopback();

class UdpNatBatchTest : public ::testing::Test {
 protected:
  // A service on 127.0.0.1:<free port> over `backends` echo servers, scheduler rr.
  void StartService(size_t backends, bool one_packet, Duration timeout = 300s) {
    for (size_t i = 0; i < backends; ++i)
      echoes_.push_back(std::make_unique<testing::UdpEcho>(io_));
    auto socket = BindUdp(io_, {kLoopback, 0});
    ASSERT_TRUE(socket.ok()) << socket.status().ToString();
    vip_ = socket->local_endpoint();
    service_fd_ = socket->native_handle();
    vservice::VirtualService vs;
    vs.key = {vservice::Proto::kUdp, vservice::IpAddress::V4(0x7f000001), vip_.port()};
    vs.config.scheduler = "rr";
    vs.config.one_packet = one_packet;
    for (auto& e : echoes_)
      vs.dests[{vservice::IpAddress::V4(0x7f000001), e->endpoint().port()}] = {};
    std::vector<DestInputs> inputs(vs.dests.size());
    for (DestInputs& in : inputs) in.stats = std::make_shared<DestStats>();
    std::shared_ptr<ServiceView> built = BuildServiceView(vs, inputs, 1);
    built->stats = std::make_shared<ServiceStats>();
    view_ = built;
    UdpNatOptions options;
    options.session_timeout = timeout;
    auto on_failure = [this](const vservice::ServiceKey&, const vservice::AddrPort& dest,
                             const std::string& reason) {
      failures_.push_back({dest, reason});
    };
    svc_ = std::make_shared<UdpNatService>(io_, clock_, sched::SchedulerOptions{}, options,
                                           on_failure, std::move(socket).value());
    svc_->OnView(view_);
    svc_->Start();
  }

  std::unique_ptr<udp::socket> Client() {
    auto c = std::make_unique<udp::socket>(io_, udp::endpoint(kLoopback, 0));
    c->non_blocking(true);
    return c;
  }
  void Send(udp::socket& c, const std::string& msg) { c.send_to(asio::buffer(msg), vip_); }

  // The receive memory the kernel charges a socket for what it holds queued (SO_MEMINFO).
  static uint32_t QueuedMemory(int fd) {
    uint32_t mem[SK_MEMINFO_VARS] = {};
    socklen_t len = sizeof(mem);
    if (::getsockopt(fd, SOL_SOCKET, SO_MEMINFO, mem, &len) != 0) return 0;
    return mem[SK_MEMINFO_RMEM_ALLOC];
  }
  // Waits until the service socket holds `n` datagrams, before the service first reads them
  // (the io_context runs only in Replies). One small datagram's charge is measured on a scratch
  // socket; the tests' datagrams are all a few bytes, so each costs the same.
  void WaitQueued(size_t n) {
    udp::socket scratch(io_, udp::endpoint(kLoopback, 0));
    udp::socket sender(io_, udp::endpoint(kLoopback, 0));
    sender.send_to(asio::buffer(std::string("x1")), scratch.local_endpoint());
    const int fd = scratch.native_handle();
    ASSERT_TRUE(test_support::WaitUntil([&] { return QueuedMemory(fd) > 0; }, 5s));
    const uint32_t one = QueuedMemory(fd);
    ASSERT_TRUE(test_support::WaitUntil([&] { return QueuedMemory(service_fd_) >= n * one; }, 5s))
        << "the service socket holds " << QueuedMemory(service_fd_) << " bytes of queue, not " << n
        << " datagrams of " << one;
  }

  // Runs the service until `want` replies have reached `clients` (`wait` at most); what each got.
  std::vector<std::vector<std::string>> Replies(std::vector<std::unique_ptr<udp::socket>>& clients,
                                                size_t want, Duration wait = 5s) {
    std::vector<std::vector<std::string>> got(clients.size());
    size_t n = 0;
    const auto end = std::chrono::steady_clock::now() + wait;
    while (n < want && std::chrono::steady_clock::now() < end) {
      if (io_.stopped()) io_.restart();
      io_.run_for(2ms);
      for (size_t i = 0; i < clients.size(); ++i) {
        char buf[256];
        udp::endpoint from;
        asio::error_code ec;
        for (size_t m; (m = clients[i]->receive_from(asio::buffer(buf), from, 0, ec)), !ec;) {
          EXPECT_EQ(from, vip_) << "a reply must come from the service's address";
          got[i].emplace_back(buf, m);
          ++n;
        }
      }
    }
    return got;
  }

  uint64_t Sum(uint64_t DestStatsValue(const DestStats&)) const {
    uint64_t s = 0;
    for (const DestView& d : view_->dests) s += DestStatsValue(*d.stats);
    return s;
  }
  uint64_t Conns() const {
    return Sum([](const DestStats& d) { return Read(d.conns); });
  }
  uint64_t Active() const {
    return Sum([](const DestStats& d) { return Read(d.active); });
  }

  // Runs the service until `done` holds (5 s at most).
  bool RunUntil(const std::function<bool()>& done) {
    const auto end = std::chrono::steady_clock::now() + 5s;
    while (!done()) {
      if (std::chrono::steady_clock::now() > end) return false;
      if (io_.stopped()) io_.restart();
      io_.run_for(2ms);
    }
    return true;
  }

  asio::io_context io_{1};
  ManualClock clock_;
  std::vector<std::pair<vservice::AddrPort, std::string>> failures_;  // the passive check's reports
  std::vector<std::unique_ptr<testing::UdpEcho>> echoes_;
  udp::endpoint vip_;
  int service_fd_ = -1;  // the service socket, for WaitQueued
  ServiceViewPtr view_;
  std::shared_ptr<UdpNatService> svc_;
};

TEST_F(UdpNatBatchTest, ManyClientsInOneBatchEachGetTheirOwnReplies) {
  StartService(2, /*one_packet=*/false);
  std::vector<std::unique_ptr<udp::socket>> clients;
  for (int i = 0; i < 12; ++i) clients.push_back(Client());
  // Two datagrams from each client, interleaved, all queued before the service first reads.
  for (int m = 0; m < 2; ++m) {
    for (int i = 0; i < 12; ++i)
      Send(*clients[i], "c" + std::to_string(i) + "-m" + std::to_string(m));
  }
  WaitQueued(24);
  const auto got = Replies(clients, 24);
  for (int i = 0; i < 12; ++i) {
    const std::string c = "c" + std::to_string(i);
    EXPECT_EQ(got[i], (std::vector<std::string>{c + "-m0", c + "-m1"})) << "client " << i;
  }
  const UdpNatService::IoStats& io = svc_->io_stats();
  EXPECT_EQ(io.client_receives, 1u) << "24 queued datagrams are one recvmmsg";
  EXPECT_EQ(io.client_datagrams, 24u);
  EXPECT_EQ(io.upstream_sends, 12u) << "one sendmmsg per session, each carrying its two";
  EXPECT_EQ(io.dropped, 0u);
  EXPECT_EQ(Conns(), 12u);
  EXPECT_EQ(Active(), 12u);
  EXPECT_EQ(Read(view_->dests[0].stats->conns), 6u);  // rr over two destinations
  EXPECT_EQ(Read(view_->stats->packets_in), 24u);
  EXPECT_EQ(Read(view_->stats->packets_out), 24u);
  EXPECT_EQ(Read(view_->stats->bytes_in), Read(view_->stats->bytes_out));
  EXPECT_EQ(Sum([](const DestStats& d) { return Read(d.packets_in); }), 24u);
  std::vector<FlowEntry> flows;
  svc_->ListFlows(clock_.Now(), flows);
  EXPECT_EQ(flows.size(), 12u);
}

TEST_F(UdpNatBatchTest, ABatchThatFindsASessionExpiredReopensItAndKeepsTheLiveOnes) {
  StartService(1, /*one_packet=*/false, /*timeout=*/10s);
  std::vector<std::unique_ptr<udp::socket>> clients;
  for (int i = 0; i < 3; ++i) clients.push_back(Client());  // A, D, C
  Send(*clients[0], "a1");
  ASSERT_EQ(Replies(clients, 1)[0], std::vector<std::string>{"a1"});
  clock_.Advance(6s);
  Send(*clients[1], "d1");
  ASSERT_EQ(Replies(clients, 1)[1], std::vector<std::string>{"d1"});
  clock_.Advance(5s);  // A's session (seen 11 s ago) has expired, D's (5 s ago) has not
  ASSERT_EQ(Conns(), 2u);
  const uint64_t receives = svc_->io_stats().client_receives;
  Send(*clients[0], "a2");
  Send(*clients[1], "d2");
  Send(*clients[2], "c1");
  Send(*clients[0], "a3");
  WaitQueued(4);
  const auto got = Replies(clients, 4);
  EXPECT_EQ(got[0], (std::vector<std::string>{"a2", "a3"}));
  EXPECT_EQ(got[1], std::vector<std::string>{"d2"});
  EXPECT_EQ(got[2], std::vector<std::string>{"c1"});
  EXPECT_EQ(svc_->io_stats().client_receives, receives + 1) << "the four came in one batch";
  EXPECT_EQ(Conns(), 4u) << "A twice (its new session), D once (kept), C once";
  EXPECT_EQ(Active(), 3u) << "A's expired session was closed when A came back";
  std::vector<FlowEntry> flows;
  svc_->ListFlows(clock_.Now(), flows);
  EXPECT_EQ(flows.size(), 3u);
}

TEST_F(UdpNatBatchTest, OnePacketSchedulingSchedulesEveryDatagramOfABatchOnItsOwn) {
  StartService(2, /*one_packet=*/true);
  std::vector<std::unique_ptr<udp::socket>> clients;
  clients.push_back(Client());
  for (int m = 0; m < 4; ++m) Send(*clients[0], "m" + std::to_string(m));
  WaitQueued(4);
  const auto got = Replies(clients, 4);
  EXPECT_EQ(got[0].size(), 4u);
  EXPECT_EQ(svc_->io_stats().client_receives, 1u);
  EXPECT_EQ(svc_->io_stats().upstream_sends, 4u) << "one upstream socket per datagram";
  EXPECT_EQ(Conns(), 4u);
  EXPECT_EQ(Read(view_->dests[0].stats->conns), 2u);  // rr: every datagram scheduled
  EXPECT_EQ(Read(view_->dests[1].stats->conns), 2u);
  std::vector<FlowEntry> flows;
  svc_->ListFlows(clock_.Now(), flows);
  EXPECT_TRUE(flows.empty()) << "one-packet scheduling keeps no session";
}

TEST_F(UdpNatBatchTest, StopClosesTheSessionsAndRelaysNoMore) {
  StartService(1, /*one_packet=*/false);
  std::vector<std::unique_ptr<udp::socket>> clients;
  for (int i = 0; i < 3; ++i) clients.push_back(Client());
  for (auto& c : clients) Send(*c, "x");
  ASSERT_EQ(Replies(clients, 3)[2], std::vector<std::string>{"x"});
  ASSERT_EQ(Active(), 3u);
  svc_->Stop();
  EXPECT_EQ(Active(), 0u);
  Send(*clients[0], "y");
  EXPECT_TRUE(Replies(clients, 1, 300ms)[0].empty());
  EXPECT_EQ(Read(view_->stats->packets_in), 3u);
}

// The passive check: a destination whose port is closed answers the session's datagram with an
// ICMP port unreachable; the session ends (its active count with it), the destination is
// reported once with the reason and counted, and the client's next datagram is scheduled again.
TEST_F(UdpNatBatchTest, APortUnreachableEndsTheSessionAndReportsTheDestination) {
  StartService(2, /*one_packet=*/false);
  const vservice::AddrPort dead{vservice::IpAddress::V4(0x7f000001), echoes_[1]->endpoint().port()};
  echoes_[1].reset();  // its port is closed: the kernel answers port unreachable
  std::vector<std::unique_ptr<udp::socket>> clients;
  for (int i = 0; i < 2; ++i) clients.push_back(Client());
  Send(*clients[0], "a1");
  Send(*clients[1], "b1");
  const auto got = Replies(clients, 1);  // rr: one session to each destination
  ASSERT_TRUE(RunUntil([&] { return !failures_.empty(); }));
  ASSERT_EQ(failures_.size(), 1u);
  EXPECT_EQ(failures_[0].first, dead);
  EXPECT_EQ(failures_[0].second, "port unreachable");
  for (const DestView& d : view_->dests) {
    EXPECT_EQ(Read(d.stats->unreachable), d.dest == dead ? 1u : 0u) << vservice::ToString(d.dest);
  }
  EXPECT_EQ(Conns(), 2u);
  EXPECT_EQ(Active(), 1u) << "the session to the dead destination is closed";
  std::vector<FlowEntry> flows;
  svc_->ListFlows(clock_.Now(), flows);
  ASSERT_EQ(flows.size(), 1u);
  EXPECT_NE(flows[0].dest, dead);
  // The client that got no answer tries again: each try is a new session, and rr alternates,
  // so the second try at the latest reaches the live destination.
  const size_t lost = got[0].empty() ? 0 : 1;
  ASSERT_TRUE(got[lost].empty() && got[1 - lost].size() == 1u);
  std::vector<std::string> answers;
  size_t tries = 0;
  while (answers.empty() && tries < 2) {
    ++tries;
    Send(*clients[lost], "again");
    answers = Replies(clients, 1, 1s)[lost];
  }
  EXPECT_EQ(answers, std::vector<std::string>{"again"});
  EXPECT_EQ(Conns(), 2u + tries) << "each try opened a session of its own";
  EXPECT_EQ(failures_.size(), tries) << "a try that met the dead port was reported too";
}

}  // namespace
}  // namespace vsc::director
