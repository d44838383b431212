// LVS semantics at changes, with real sockets on loopback (issue 12): weight 0 keeps open
// connections; a removed destination's connections go on, or end under expire_nodest_conn;
// a destination its check marks down ends its connections with on_marked_down =
// shutdown-sessions and keeps them without; UDP nat sessions likewise. Scheduler tables are
// shared: a verdict change publishes a view with the same table.
#include <poll.h>

#include "service_engine_fixture.h"

namespace vsc::director::engine_test {
namespace {

// A client connection through the service to a silent destination: open until someone closes.
class LongConnection {
 public:
  explicit LongConnection(uint16_t port) : socket_(io_) {
    socket_.connect({asio::ip::address_v4::loopback(), port});
    asio::write(socket_, asio::buffer(std::string("hello")));
  }
  // True when the director closed or reset it (readable with EOF or an error).
  bool Closed() {
    pollfd p{socket_.native_handle(), POLLIN, 0};
    if (::poll(&p, 1, 0) <= 0) return false;
    char c;
    return ::recv(socket_.native_handle(), &c, 1, MSG_DONTWAIT) <= 0;
  }

 private:
  asio::io_context io_;
  asio::ip::tcp::socket socket_;
};

class ServiceChangesTest : public ServiceEngineTest {
 protected:
  // One service (wlc) with one silent destination; returns its port.
  uint16_t OneSilentDest(VirtualServiceTable& t, DestConfig d = {}) {
    silent_ = Server(TcpTestServer::Mode::kSilent);
    const uint16_t port = silent_->endpoint().port();
    EXPECT_TRUE(t.AddService(Key(), {}).ok());
    EXPECT_TRUE(t.AddDest(Key(), Local(port), d).ok());
    EXPECT_TRUE(Commit(t).ok());
    return port;
  }
  uint64_t Ended() { return Runtime(Key()).flows_ended; }
  // Weight 0 for the destination at `port`, committed and seen by every worker.
  bool Quiesce(VirtualServiceTable& t, uint16_t port) {
    DestConfig zero;
    zero.weight = 0;
    if (!t.EditDest(Key(), Local(port), zero).ok() || !Commit(t).ok()) return false;
    Barrier();
    return true;
  }
  std::unique_ptr<TcpTestServer> silent_;
};

TEST_F(ServiceChangesTest, WeightZeroAndRemovalKeepAConnectionByDefault) {
  VirtualServiceTable t;
  const uint16_t port = OneSilentDest(t);
  LongConnection c(port_);
  ASSERT_TRUE(Eventually([&] { return Dest(Key(), port).active_conns == 1; }));
  ASSERT_TRUE(Quiesce(t, port));
  EXPECT_FALSE(c.Closed()) << "weight 0 is quiescent: the open connection goes on";
  EXPECT_EQ(Request(port_), "") << "but it takes no new one";
  ASSERT_TRUE(t.DelDest(Key(), Local(port)).ok());
  ASSERT_TRUE(Commit(t).ok());
  Barrier();
  EXPECT_FALSE(c.Closed()) << "expire_nodest_conn off: a removed destination's flows go on";
  EXPECT_EQ(Ended(), 0u);
}

TEST_F(ServiceChangesTest, RemovalUnderExpireNodestConnClosesTheConnection) {
  EngineOptions eo;
  eo.nat.expire_nodest_conn = true;
  Reopen(std::move(eo));
  VirtualServiceTable t;
  const uint16_t port = OneSilentDest(t);
  LongConnection c(port_);
  ASSERT_TRUE(Eventually([&] { return Dest(Key(), port).active_conns == 1; }));
  ASSERT_TRUE(Quiesce(t, port));
  EXPECT_FALSE(c.Closed()) << "weight 0 keeps it even under expire_nodest_conn";
  ASSERT_TRUE(t.DelDest(Key(), Local(port)).ok());
  ASSERT_TRUE(Commit(t).ok());
  EXPECT_TRUE(Eventually([&] { return c.Closed(); }));
  EXPECT_TRUE(Eventually([&] { return Ended() == 1; }));  // counted just after the close
}

TEST_F(ServiceChangesTest, MarkedDownWithShutdownSessionsClosesTheConnection) {
  // Two services, each with one silent destination under a fast check: one configured with
  // on_marked_down = shutdown-sessions, the other not.
  VirtualServiceTable t;
  DestConfig shut = WithCheck(milliseconds(100));
  shut.shutdown_sessions = true;
  const uint16_t port = OneSilentDest(t, shut);
  auto other = Server(TcpTestServer::Mode::kSilent);
  const uint16_t other_port = other->endpoint().port();
  const ServiceKey key2{vservice::Proto::kTcp, IpAddress::V4(0x7f000001), FreePort()};
  ASSERT_TRUE(t.AddService(key2, {}).ok());
  ASSERT_TRUE(t.AddDest(key2, Local(other_port), WithCheck(milliseconds(100))).ok());
  ASSERT_TRUE(Commit(t).ok());
  ASSERT_TRUE(Eventually([&] { return Dest(Key(), port).check_result.starts_with("ok"); }));
  LongConnection c(port_), kept(key2.port);
  ASSERT_TRUE(Eventually([&] { return Dest(Key(), port).active_conns == 1; }));
  ASSERT_TRUE(Eventually([&] { return Dest(key2, other_port).active_conns == 1; }));
  const uint64_t builds = control_.Run([&] { return engine_->sched_table_builds(); });
  backends_.Run([&] {  // both stop accepting: their checks fail, open connections stay
    silent_->Close();
    other->Close();
    return 0;
  });
  ASSERT_TRUE(Eventually([&] { return Dest(Key(), port).state == "DOWN"; }));
  ASSERT_TRUE(Eventually([&] { return Dest(key2, other_port).state == "DOWN"; }));
  EXPECT_TRUE(Eventually([&] { return c.Closed(); }));
  Barrier();
  EXPECT_FALSE(kept.Closed()) << "without shutdown-sessions a marked-down server keeps its flows";
  EXPECT_EQ(Ended(), 1u);  // after the barrier: the worker has counted it
  // A verdict changes availability only: the views that carried it built no scheduler table.
  EXPECT_EQ(control_.Run([&] { return engine_->sched_table_builds(); }), builds);
}

// A connection the sorry server took is registered like any other: replacing the sorry server
// under expire_nodest_conn closes it (keepalived's sorry server is a destination of its own).
TEST_F(ServiceChangesTest, ReplacingTheSorryServerUnderExpireNodestConnClosesItsConnection) {
  EngineOptions eo;
  eo.nat.expire_nodest_conn = true;
  Reopen(std::move(eo));
  auto sorry_a = Server(TcpTestServer::Mode::kSilent);
  auto sorry_b = Server(TcpTestServer::Mode::kSilent);
  vservice::ServiceConfig config;
  config.sorry_server = Local(sorry_a->endpoint().port());
  VirtualServiceTable t;
  ASSERT_TRUE(t.AddService(Key(), config).ok());  // no destination: clients go to the sorry server
  ASSERT_TRUE(Commit(t).ok());
  LongConnection c(port_);
  ASSERT_TRUE(Eventually([&] { return Runtime(Key()).connections == 1; }));
  config.sorry_server = Local(sorry_b->endpoint().port());
  ASSERT_TRUE(t.EditService(Key(), config).ok());
  ASSERT_TRUE(Commit(t).ok());
  EXPECT_TRUE(Eventually([&] { return c.Closed(); }));
  EXPECT_TRUE(Eventually([&] { return Ended() == 1; }));
}

TEST_F(ServiceChangesTest, UdpSessionOfARemovedDestinationEndsUnderExpireNodestConn) {
  EngineOptions eo;
  eo.nat.expire_nodest_conn = true;
  Reopen(std::move(eo));
  auto echo_a = backends_.Run([&] { return std::make_unique<testing::UdpEcho>(backends_.io()); });
  auto echo_b = backends_.Run([&] { return std::make_unique<testing::UdpEcho>(backends_.io()); });
  const ServiceKey key{vservice::Proto::kUdp, IpAddress::V4(0x7f000001), FreePort()};
  VirtualServiceTable t;
  ASSERT_TRUE(t.AddService(key, {}).ok());
  ASSERT_TRUE(t.AddDest(key, Local(echo_a->endpoint().port()), {}).ok());
  ASSERT_TRUE(Commit(t).ok());
  asio::io_context io;
  asio::ip::udp::socket c(io, {asio::ip::address_v4::loopback(), 0});
  c.connect({asio::ip::address_v4::loopback(), key.port});
  timeval two_seconds{2, 0};
  ::setsockopt(c.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &two_seconds, sizeof(two_seconds));
  auto echo = [&c](const std::string& msg) {
    c.send(asio::buffer(msg));
    char buf[64];
    asio::error_code ec;
    const size_t n = c.receive(asio::buffer(buf), 0, ec);
    return ec ? std::string("no reply") : std::string(buf, n);
  };
  ASSERT_EQ(echo("one"), "one");
  // Replace A by B: the client's session to A ends, its next datagram opens one to B.
  ASSERT_TRUE(t.AddDest(key, Local(echo_b->endpoint().port()), {}).ok());
  ASSERT_TRUE(t.DelDest(key, Local(echo_a->endpoint().port())).ok());
  ASSERT_TRUE(Commit(t).ok());
  Barrier();
  ASSERT_EQ(echo("two"), "two");
  EXPECT_TRUE(Eventually([&] { return Dest(key, echo_b->endpoint().port()).packets_in == 1; }));
  EXPECT_EQ(Runtime(key).flows_ended, 1u);
  backends_.Run([&] {
    echo_a.reset();
    echo_b.reset();
    return 0;
  });
}

}  // namespace
}  // namespace vsc::director::engine_test
