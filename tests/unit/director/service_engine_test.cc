// ServiceEngine with real sockets on loopback: TCP nat balancing, redispatch and the passive
// check, a port in use refused atomically, weight 0 and the sorry server, UDP nat sessions,
// figures that move while a connection is open; the built-in lookup entries (UDP dr with the
// forward header, TCP nat) served to the registered agents and edited through the table.
#include "director/service_engine.h"

#include <gtest/gtest.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>

#include "proto/lookup_codec.h"
#include "service_engine_fixture.h"

namespace vsc::director::engine_test {
namespace {

TEST_F(ServiceEngineTest, BalancesOverStaticDestinations) {
  auto a = Server(TcpTestServer::Mode::kRespond, "A");
  auto b = Server(TcpTestServer::Mode::kRespond, "B");
  VirtualServiceTable t;
  vservice::ServiceConfig rr;
  rr.scheduler = "rr";
  ASSERT_TRUE(t.AddService(Key(), rr).ok());
  ASSERT_TRUE(t.AddDest(Key(), Local(a->endpoint().port()), {}).ok());
  ASSERT_TRUE(t.AddDest(Key(), Local(b->endpoint().port()), {}).ok());
  ASSERT_TRUE(Commit(t).ok());
  EXPECT_EQ(control_.Run([&] { return engine_->table() == t; }), true);
  int seen_a = 0, seen_b = 0;
  for (int i = 0; i < 20; ++i) {
    std::string r = Request(port_);
    seen_a += r == "A";
    seen_b += r == "B";
  }
  EXPECT_EQ(seen_a + seen_b, 20);
  EXPECT_GE(seen_a, 5);  // rr per worker over two workers: both get a fair share
  EXPECT_GE(seen_b, 5);
  const ServiceRuntime r = Runtime(Key());
  EXPECT_EQ(r.connections, 20u);
  EXPECT_EQ(r.bytes_in, 20u * 4);  // "ping"
  EXPECT_EQ(r.bytes_out, 20u);
  ASSERT_EQ(r.dests.size(), 2u);
  EXPECT_EQ(r.dests[0].connections + r.dests[1].connections, 20u);
  EXPECT_TRUE(r.dests[0].usable);
  EXPECT_EQ(r.dests[0].state, "UP");
}

// Seed 003: dwlc weighs static destinations by 700 - T, T the response time that their HTTP_GET
// checks measure. Ten connections held open go about 7 : 3 to a server answering at once and one
// answering in 500 ms (weights ~700 and ~200); with T unknown they would go 5 : 5.
TEST_F(ServiceEngineTest, DwlcWeighsStaticDestinationsByTheResponseTimeOfTheirChecks) {
  const std::string ok = "HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok";
  auto fast = Server(TcpTestServer::Mode::kRespond, ok);
  auto slow = Server(TcpTestServer::Mode::kRespond, ok);
  backends_.Run([&] {
    slow->SetDelay(milliseconds(500));
    return 0;
  });
  const uint16_t slow_port = slow->endpoint().port(), fast_port = fast->endpoint().port();
  VirtualServiceTable t;
  vservice::ServiceConfig dwlc;
  dwlc.scheduler = "dwlc";
  ASSERT_TRUE(t.AddService(Key(), dwlc).ok());
  DestConfig d;
  d.check = vservice::DefaultCheck(vservice::CheckType::kHttpGet);
  d.check->path = "/";
  d.check->delay_loop = milliseconds(100);
  d.check->connect_timeout = milliseconds(2000);
  ASSERT_TRUE(t.AddDest(Key(), Local(slow_port), d).ok());
  ASSERT_TRUE(t.AddDest(Key(), Local(fast_port), d).ok());
  ASSERT_TRUE(Commit(t).ok());
  auto response_ms = [&](uint16_t port) {
    return control_.Run([&] {
      for (const DestView& v : engine_->view(Key())->dests) {
        if (v.dest.port == port) return v.backend.response_ms;
      }
      return -1.0;
    });
  };
  ASSERT_TRUE(Eventually([&] {
    return response_ms(slow_port) >= 400 && response_ms(fast_port) > 0;
  })) << "slow "
      << response_ms(slow_port) << " ms, fast " << response_ms(fast_port) << " ms";
  EXPECT_LT(response_ms(fast_port), 100);

  asio::io_context io;
  std::vector<asio::ip::tcp::socket> held;
  for (size_t i = 1; i <= 10; ++i) {
    held.emplace_back(io).connect({asio::ip::address_v4::loopback(), port_});
    ASSERT_TRUE(Eventually([&] {
      return Dest(Key(), slow_port).active_conns + Dest(Key(), fast_port).active_conns == i;
    })) << "connection "
        << i << " not counted";
  }
  EXPECT_GE(Dest(Key(), fast_port).active_conns, 7u);
  EXPECT_GE(Dest(Key(), slow_port).active_conns, 1u) << "the slow one keeps a share (700 - T > 0)";
}

TEST_F(ServiceEngineTest, ConnectFailureIsRedispatchedAndMarksTheDestination) {
  auto a = Server(TcpTestServer::Mode::kRespond, "A");
  auto b = Server(TcpTestServer::Mode::kRespond, "B");
  const uint16_t b_port = b->endpoint().port();
  VirtualServiceTable t;
  vservice::ServiceConfig rr;
  rr.scheduler = "rr";
  ASSERT_TRUE(t.AddService(Key(), rr).ok());
  // A long delay_loop: after the first probes, only the passive check can notice B dying.
  ASSERT_TRUE(t.AddDest(Key(), Local(a->endpoint().port()), WithCheck(milliseconds(60000))).ok());
  ASSERT_TRUE(t.AddDest(Key(), Local(b_port), WithCheck(milliseconds(60000))).ok());
  ASSERT_TRUE(Commit(t).ok());
  ASSERT_TRUE(Eventually([&] { return Dest(Key(), b_port).check_result.starts_with("ok"); }));
  Close(b);  // B refuses from now on
  for (int i = 0; i < 10; ++i) EXPECT_EQ(Request(port_), "A") << "request " << i;
  EXPECT_GE(control_.Run([&] { return Read(engine_->view(Key())->stats->redispatched); }), 1u);
  // Passive mark at once, then the expedited probe and its retry: DOWN within about
  // delay_before_retry + 2 connect_timeouts, far below delay_loop.
  ASSERT_TRUE(Eventually([&] { return Dest(Key(), b_port).state == "DOWN"; }, milliseconds(3000)));
  EXPECT_FALSE(Dest(Key(), b_port).usable);
}

// The UDP passive check: a destination whose port closed answers ICMP port unreachable; the
// session ends, the destination is marked at once (its check, delay_loop 60 s, would take a
// minute) and the client's next datagram goes to the live one.
TEST_F(ServiceEngineTest, PortUnreachableMarksAUdpDestinationAndTheClientMovesOn) {
  auto echo_a = backends_.Run([&] { return std::make_unique<testing::UdpEcho>(backends_.io()); });
  auto echo_b = backends_.Run([&] { return std::make_unique<testing::UdpEcho>(backends_.io()); });
  const uint16_t b_port = echo_b->endpoint().port();
  const ServiceKey key{vservice::Proto::kUdp, IpAddress::V4(0x7f000001), FreePort()};
  vservice::ServiceConfig rr;
  rr.scheduler = "rr";
  DestConfig udp_check = WithCheck(milliseconds(60000));
  udp_check.check->type = vservice::CheckType::kUdp;
  VirtualServiceTable t;
  ASSERT_TRUE(t.AddService(key, rr).ok());
  ASSERT_TRUE(t.AddDest(key, Local(echo_a->endpoint().port()), udp_check).ok());
  ASSERT_TRUE(t.AddDest(key, Local(b_port), udp_check).ok());
  ASSERT_TRUE(Commit(t).ok());
  ASSERT_TRUE(Eventually([&] { return Dest(key, b_port).check_result.starts_with("ok"); }));
  backends_.Run([&] {
    echo_b.reset();  // B's port closes
    return 0;
  });
  // Four clients one after another (two workers: one of them schedules two, rr puts one on B);
  // each retries at most twice, 300 ms apart.
  asio::io_context io;
  for (int i = 0; i < 4; ++i) {
    asio::ip::udp::socket c(io, {asio::ip::address_v4::loopback(), 0});
    c.connect({asio::ip::address_v4::loopback(), key.port});
    timeval wait{0, 300000};
    ::setsockopt(c.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof(wait));
    std::string reply;
    for (int attempt = 0; attempt < 3 && reply.empty(); ++attempt) {
      c.send(asio::buffer("c" + std::to_string(i)));
      char buf[64];  // ::recv, as asio would wait past SO_RCVTIMEO
      const ssize_t n = ::recv(c.native_handle(), buf, sizeof(buf), 0);
      if (n > 0) reply.assign(buf, static_cast<size_t>(n));
    }
    EXPECT_EQ(reply, "c" + std::to_string(i)) << "client " << i;
  }
  const DestRuntime b = Dest(key, b_port);
  EXPECT_GE(b.unreachable, 1u);
  EXPECT_FALSE(b.usable) << b.state;
  EXPECT_EQ(Dest(key, echo_a->endpoint().port()).unreachable, 0u);
  backends_.Run([&] {
    echo_a.reset();
    return 0;
  });
}

TEST_F(ServiceEngineTest, DownDestinationComesBackWhenItsCheckPasses) {
  auto a = Server(TcpTestServer::Mode::kRespond, "A");
  const uint16_t b_port = FreePort();
  VirtualServiceTable t;
  vservice::ServiceConfig rr;
  rr.scheduler = "rr";  // wlc would keep picking A: with no open connection both cost 0
  ASSERT_TRUE(t.AddService(Key(), rr).ok());
  ASSERT_TRUE(t.AddDest(Key(), Local(a->endpoint().port()), WithCheck(milliseconds(200))).ok());
  ASSERT_TRUE(t.AddDest(Key(), Local(b_port), WithCheck(milliseconds(200))).ok());
  ASSERT_TRUE(Commit(t).ok());
  ASSERT_TRUE(Eventually([&] { return Dest(Key(), b_port).state == "DOWN"; }));
  for (int i = 0; i < 6; ++i) EXPECT_EQ(Request(port_), "A");
  auto b = Server(TcpTestServer::Mode::kRespond, "B", b_port);
  ASSERT_TRUE(Eventually([&] { return Dest(Key(), b_port).usable; }));
  EXPECT_TRUE(Eventually([&] { return Request(port_) == "B"; }));
}

TEST_F(ServiceEngineTest, PortInUseFailsTheWholeCommit) {
  asio::io_context io;
  asio::ip::tcp::acceptor taken(io, {asio::ip::address_v4::loopback(), 0});  // no SO_REUSEPORT
  const ServiceKey free_key = Key();
  const ServiceKey busy{vservice::Proto::kTcp, IpAddress::V4(0x7f000001),
                        taken.local_endpoint().port()};
  VirtualServiceTable t;
  ASSERT_TRUE(t.AddService(free_key, {}).ok());
  ASSERT_TRUE(t.AddService(busy, {}).ok());
  Status s = Commit(t);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("in use"), std::string::npos) << s.message();
  EXPECT_TRUE(control_.Run([&] { return engine_->table().services().empty(); }));
  // Nothing of the failed commit listens: the free port is still free.
  asio::ip::tcp::socket c(io);
  asio::error_code ec;
  c.connect({asio::ip::address_v4::loopback(), free_key.port}, ec);
  EXPECT_TRUE(ec);
}

TEST_F(ServiceEngineTest, WeightZeroIsQuiescentAndTheSorryServerTakesOver) {
  auto a = Server(TcpTestServer::Mode::kRespond, "A");
  auto sorry = Server(TcpTestServer::Mode::kRespond, "SORRY");
  VirtualServiceTable t;
  ASSERT_TRUE(t.AddService(Key(), {}).ok());
  DestConfig zero;
  zero.weight = 0;
  ASSERT_TRUE(t.AddDest(Key(), Local(a->endpoint().port()), zero).ok());
  ASSERT_TRUE(Commit(t).ok());
  EXPECT_EQ(Request(port_), "");  // no usable destination, no sorry server: closed
  EXPECT_EQ(Dest(Key(), a->endpoint().port()).state, "QUIESCENT");
  vservice::ServiceConfig with_sorry;
  with_sorry.sorry_server = Local(sorry->endpoint().port());
  ASSERT_TRUE(t.EditService(Key(), with_sorry).ok());
  ASSERT_TRUE(Commit(t).ok());
  EXPECT_EQ(Request(port_), "SORRY");
  ASSERT_TRUE(t.EditDest(Key(), Local(a->endpoint().port()), {}).ok());
  ASSERT_TRUE(Commit(t).ok());
  EXPECT_EQ(Request(port_), "A");
  EXPECT_EQ(control_.Run([&] { return Read(engine_->view(Key())->stats->to_sorry); }), 1u);
}

TEST_F(ServiceEngineTest, FiguresMoveWhileAConnectionIsOpen) {
  auto echo = Server(TcpTestServer::Mode::kSilent);  // accepts, never answers, never closes
  VirtualServiceTable t;
  ASSERT_TRUE(t.AddService(Key(), {}).ok());
  ASSERT_TRUE(t.AddDest(Key(), Local(echo->endpoint().port()), {}).ok());
  ASSERT_TRUE(Commit(t).ok());
  asio::io_context io;
  asio::ip::tcp::socket c(io);
  c.connect({asio::ip::address_v4::loopback(), port_});
  asio::write(c, asio::buffer(std::string(1000, 'x')));
  EXPECT_TRUE(Eventually([&] {
    DestRuntime d = Dest(Key(), echo->endpoint().port());
    return d.active_conns == 1 && d.bytes_in == 1000 && d.connections == 1;
  }));
  ASSERT_TRUE(control_.Run([&] { return engine_->ZeroCounters(std::nullopt); }).ok());
  EXPECT_EQ(Dest(Key(), echo->endpoint().port()).bytes_in, 0u);
  EXPECT_EQ(Dest(Key(), echo->endpoint().port()).active_conns, 1u);  // -Z zeroes totals only
}

TEST_F(ServiceEngineTest, UdpNatKeepsASessionAndRelaysReplies) {
  std::unique_ptr<testing::UdpEcho> echo =
      backends_.Run([&] { return std::make_unique<testing::UdpEcho>(backends_.io()); });
  const ServiceKey key{vservice::Proto::kUdp, IpAddress::V4(0x7f000001), FreePort()};
  VirtualServiceTable t;
  ASSERT_TRUE(t.AddService(key, {}).ok());
  ASSERT_TRUE(t.AddDest(key, Local(echo->endpoint().port()), {}).ok());
  ASSERT_TRUE(Commit(t).ok());
  asio::io_context io;
  asio::ip::udp::socket c(io, {asio::ip::address_v4::loopback(), 0});
  c.connect({asio::ip::address_v4::loopback(), key.port});
  timeval two_seconds{2, 0};  // a lost reply fails the test instead of hanging it
  ::setsockopt(c.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &two_seconds, sizeof(two_seconds));
  for (int i = 0; i < 3; ++i) {
    const std::string msg = "hello " + std::to_string(i);
    c.send(asio::buffer(msg));
    char buf[64];
    asio::error_code ec;
    size_t n = c.receive(asio::buffer(buf), 0, ec);  // from the service's address (connected)
    ASSERT_FALSE(ec) << "no reply to datagram " << i << ": " << ec.message();
    EXPECT_EQ(std::string(buf, n), msg);
  }
  const ServiceRuntime r = Runtime(key);
  ASSERT_EQ(r.dests.size(), 1u);
  EXPECT_EQ(r.dests[0].connections, 1u);  // one session for one client address:port
  EXPECT_EQ(r.dests[0].active_conns, 1u);
  EXPECT_EQ(r.dests[0].packets_in, 3u);
  EXPECT_EQ(r.dests[0].packets_out, 3u);
  backends_.Run([&] {
    echo.reset();
    return 0;
  });
}

// The built-in lookup entries, as the director runs them: sockets bound by the caller on one
// port, destinations = the agents registered with the control plane.
class LookupEngineTest : public ServiceEngineTest {
 protected:
  LookupEngineTest() {
    EngineOptions eo;
    uint16_t port = 0;
    for (size_t i = 0; i < pool_.size(); ++i) {
      net::UdpBatchOptions uo;
      uo.reuse_port = true;
      auto pair = net::BindTcpUdpPair(pool_.context(i), asio::ip::address_v4::loopback(), port, uo);
      EXPECT_TRUE(pair.ok()) << pair.status().ToString();
      port = pair->port;
      eo.lookup.udp.push_back(std::move(pair->udp));
      eo.lookup.tcp.push_back(std::move(pair->tcp));
    }
    udp_ = {vservice::Proto::kUdp, IpAddress::V4(0x7f000001), port};
    tcp_ = {vservice::Proto::kTcp, IpAddress::V4(0x7f000001), port};
    eo.builtin = {udp_, tcp_};
    control_.Run([&] {
      engine_->Stop();
      engine_ =
          std::make_unique<ServiceEngine>(control_.io(), pool_, clock_, plane_, std::move(eo));
      return 0;
    });
  }
  // An ACTIVE agent whose lookup endpoints are `udp_port` and `tcp_port` on `host`.
  void Register(const std::string& id, uint16_t udp_port, uint16_t tcp_port,
                const std::string& host = "127.0.0.1") {
    control_.Run([&] {
      proto::Register r;
      r.set_id(id);
      r.set_incarnation(1);
      r.set_weight(1);
      for (auto [service, port] : {std::pair{"lookup-udp", udp_port}, {"lookup-tcp", tcp_port}}) {
        auto* e = r.add_endpoints();
        e->set_service(service);
        e->set_host(host);
        e->set_port(port);
      }
      EXPECT_TRUE(plane_.OnRegister(r, ++sessions_, 7101, clock_.Now()).accepted());
      proto::Heartbeat hb;
      hb.set_id(id);
      hb.set_incarnation(1);
      hb.set_counter(1);
      plane_.OnHeartbeat(hb, clock_.Now());
      plane_.BuildView();
      engine_->OnMembershipChanged();
      return 0;
    });
  }
  VirtualServiceTable Table() {
    return control_.Run([&] { return engine_->table(); });
  }

  ServiceKey udp_, tcp_;
  uint64_t sessions_ = 0;
};

TEST_F(LookupEngineTest, UdpLookupIsForwardedWithTheHeaderNamingTheClient) {
  asio::io_context io;
  asio::ip::udp::socket rs(io, {asio::ip::address_v4::loopback(), 0});
  timeval two_seconds{2, 0};
  ::setsockopt(rs.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &two_seconds, sizeof(two_seconds));
  VirtualServiceTable t;
  ASSERT_TRUE(t.AddService(udp_, {}).ok());
  ASSERT_TRUE(t.AddService(tcp_, {}).ok());
  ASSERT_TRUE(Commit(t).ok());
  Register("rs1", rs.local_endpoint().port(), 1);

  asio::ip::udp::socket c(io, {asio::ip::address_v4::loopback(), 0});
  const std::string garbage = "not a lookup request";
  c.send_to(asio::buffer(garbage), {asio::ip::address_v4::loopback(), udp_.port});
  std::array<uint8_t, 128> req{};
  const uint64_t ids[] = {42};
  const size_t n = proto::EncodeRequest(proto::LookupRequest::Of(7, ids), req);
  c.send_to(asio::buffer(req.data(), n), {asio::ip::address_v4::loopback(), udp_.port});

  std::array<uint8_t, 256> got{};
  asio::error_code ec;
  const size_t m = rs.receive(asio::buffer(got), 0, ec);
  ASSERT_FALSE(ec) << "the request did not reach the real server: " << ec.message();
  auto header = proto::DecodeForwardHeader(std::span<const uint8_t>(got.data(), m));
  ASSERT_TRUE(header.ok()) << header.status().ToString();
  EXPECT_EQ(header->client_ip, 0x7f000001u);
  EXPECT_EQ(header->client_port, c.local_endpoint().port());
  ASSERT_EQ(m, proto::kForwardHeaderSize + n);  // the garbage never reached it
  EXPECT_EQ(std::memcmp(got.data() + proto::kForwardHeaderSize, req.data(), n), 0);
  const ServiceRuntime r = Runtime(udp_);
  EXPECT_EQ(r.packets_in, 2u);
  EXPECT_EQ(r.malformed, 1u);
  EXPECT_EQ(r.connections, 1u);
  ASSERT_EQ(r.dests.size(), 1u);
  EXPECT_EQ(r.dests[0].server_id, "rs1");
  EXPECT_EQ(r.dests[0].connections, 1u);
}

TEST_F(LookupEngineTest, TcpLookupIsProxiedToTheAgentsEndpoint) {
  auto a = Server(TcpTestServer::Mode::kRespond, "A");
  VirtualServiceTable t;
  ASSERT_TRUE(t.AddService(udp_, {}).ok());
  ASSERT_TRUE(t.AddService(tcp_, {}).ok());
  ASSERT_TRUE(Commit(t).ok());
  EXPECT_EQ(Request(tcp_.port), "") << "answered with no agent registered";
  Register("rs1", 1, a->endpoint().port());
  EXPECT_TRUE(Eventually([&] { return Request(tcp_.port) == "A"; }));
  EXPECT_EQ(Dest(tcp_, a->endpoint().port()).server_id, "rs1");
  Close(a);
}

// A server is of its service's family (ipvsadm's rule): an agent registered on IPv6 is no
// candidate of an IPv4 VIP's lookup entries, one on IPv4 is.
TEST_F(LookupEngineTest, AnAgentOfTheOtherFamilyIsNoCandidate) {
  VirtualServiceTable t;
  ASSERT_TRUE(t.AddService(udp_, {}).ok());
  ASSERT_TRUE(t.AddService(tcp_, {}).ok());
  ASSERT_TRUE(Commit(t).ok());
  Register("rs6", 4001, 4002, "::1");
  EXPECT_TRUE(Runtime(udp_).dests.empty());
  EXPECT_TRUE(Runtime(tcp_).dests.empty());
  Register("rs4", 4003, 4004);
  ASSERT_EQ(Runtime(udp_).dests.size(), 1u);
  EXPECT_EQ(Runtime(udp_).dests[0].server_id, "rs4");
  ASSERT_EQ(Runtime(tcp_).dests.size(), 1u);
}

TEST_F(LookupEngineTest, TheTableEditsTheirConfigurationNotTheirDestinations) {
  VirtualServiceTable t;
  ASSERT_TRUE(t.AddService(udp_, {}).ok());
  ASSERT_TRUE(t.AddService(tcp_, {}).ok());
  ASSERT_TRUE(Commit(t).ok());
  // ipvsadm -E -u VIP:port -s sh: the running view schedules with it.
  VirtualServiceTable edit = Table();
  vservice::ServiceConfig sh;
  sh.scheduler = "sh";
  ASSERT_TRUE(edit.EditService(udp_, sh).ok());
  ASSERT_TRUE(Commit(edit).ok());
  EXPECT_EQ(control_.Run([&] { return engine_->view(udp_)->config.scheduler; }), "sh");
  // -C, -R or a reload that leaves them out keeps them, as they run.
  ASSERT_TRUE(Commit(VirtualServiceTable{}).ok());
  ASSERT_NE(Table().Find(udp_), nullptr);
  EXPECT_EQ(Table().Find(udp_)->config.scheduler, "sh");
  ASSERT_NE(Table().Find(tcp_), nullptr);
  // A destination of theirs is refused: the agents are their destinations. Nothing changes.
  VirtualServiceTable dest = Table();
  ASSERT_TRUE(dest.AddDest(tcp_, Local(9), {}).ok());
  const Status refused = Commit(dest);
  EXPECT_EQ(refused.code(), Code::kFailedPrecondition);
  EXPECT_NE(refused.message().find("registered agents"), std::string::npos) << refused.message();
  EXPECT_TRUE(Table().Find(tcp_)->dests.empty());
}

}  // namespace
}  // namespace vsc::director::engine_test
