// ReadRouter on a real UDP socket on 127.0.0.1 (port 0) in front of a real Replicator
// (ReplicatorFixture): the replicas' "sql-udp" ports are test sockets, so the test sees exactly
// what the router forwards, and the client's socket sees what the director itself answers
// (issue 10, glue only integration reached). Time is the fixture's ManualClock: a held read
// expires only when the test advances it.
#include "director/read_router.h"

#include <gtest/gtest.h>
#include <poll.h>

#include <array>
#include <optional>
#include <string>
#include <vector>

#include "common/unique_fd.h"
#include "net/endpoint.h"
#include "proto/envelope.h"
#include "proto/lookup_codec.h"
#include "unit/client/lookup_responder.h"
#include "unit/director/replicator_fixture.h"
#include "unit/net/net_test_util.h"

namespace vsc::director {
namespace {

using namespace std::chrono_literals;
using Bytes = std::vector<uint8_t>;
using testing::FakeReplica;

enum class UdpFamily { kV4, kV6 };

// A datagram socket on 127.0.0.1 or ::1 (port 0): a replica's sql-udp port, or a client.
class Udp {
 public:
  explicit Udp(UdpFamily family = UdpFamily::kV4) : v6_(family == UdpFamily::kV6) {
    if (v6_) {
      fd_ = UniqueFd(::socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0));
      net::SockAddr local = Loopback6(0);
      EXPECT_EQ(::bind(fd_.get(), local.get(), local.length()), 0) << "bind [::1]:0";
    } else {
      fd_ = UniqueFd(vsc::testing::BoundSocket(SOCK_DGRAM));
    }
    net::testing::SetRecvTimeout(fd_.get(), std::chrono::seconds(10));
  }
  uint16_t port() const {
    net::SockAddr local;
    socklen_t len = sizeof(local);
    ::getsockname(fd_.get(), reinterpret_cast<sockaddr*>(&local), &len);
    return local.port();
  }
  // Sends to the loopback address of this socket's family.
  void SendTo(uint16_t port, const Bytes& bytes) {
    const net::SockAddr to = v6_ ? Loopback6(port) : net::SockAddr(net::testing::Loopback(port));
    ASSERT_EQ(::sendto(fd_.get(), bytes.data(), bytes.size(), 0, to.get(), to.length()),
              static_cast<ssize_t>(bytes.size()));
  }
  // The next datagram; nullopt when none came within 10 s.
  std::optional<Bytes> Receive() {
    Bytes buf(70000);
    const ssize_t n = ::recv(fd_.get(), buf.data(), buf.size(), 0);
    if (n < 0) return std::nullopt;
    buf.resize(static_cast<size_t>(n));
    return buf;
  }
  // Whether a datagram arrives within `wait` (one that must not come).
  bool Readable(std::chrono::milliseconds wait) {
    pollfd p{fd_.get(), POLLIN, 0};
    return ::poll(&p, 1, static_cast<int>(wait.count())) > 0;
  }

 private:
  static net::SockAddr Loopback6(uint16_t port) {
    sockaddr_in6 a{};
    a.sin6_family = AF_INET6;
    a.sin6_addr = in6addr_loopback;
    a.sin6_port = htons(port);
    return a;
  }

  bool v6_;
  UniqueFd fd_;
};

class ReadRouterTest : public testing::ReplicatorFixture {
 protected:
  void SetUp() override {
    ReplicatorFixture::SetUp();
    Open();
  }
  void TearDown() override {
    StopLoop([this] {
      if (router_) router_->Stop();
    });
    router_.reset();
    ReplicatorFixture::TearDown();
  }

  // Binds and starts the router, wired to the replicator's progress as the Director does it,
  // then runs the loop.
  // `address`: "::1" an IPv6 port, "::" a dual-stack one.
  void Start(ReadRouterOptions options = {}, const std::string& address = "127.0.0.1") {
    auto socket =
        ReadRouter::Bind(io_, asio::ip::udp::endpoint(asio::ip::make_address(address), 0));
    ASSERT_TRUE(socket.ok()) << socket.status().ToString();
    router_ = std::make_unique<ReadRouter>(io_, testing::TestKey(), clock_, *rep_, options);
    rep_->SetListeners({}, [this] { router_->OnProgress(); });
    router_->Start(std::move(socket).value());
    StartLoop();
  }

  // A replica whose sql-udp port is `socket`, registered on the loop.
  FakeReplica JoinReplica(const std::string& id, const Udp& socket,
                          const std::string& host = "127.0.0.1") {
    FakeReplica r = MakeReplica(id);
    r.sql_udp_port = socket.port();
    r.host = host;
    OnLoop([&] { return Join(r).needs_catch_up(); });
    return r;
  }

  // One write, sequenced and sent to every replica (not acked).
  void SequenceOneWrite(const std::vector<FakeReplica*>& replicas) {
    OnLoop([&] { return Write("INSERT INTO t(v) VALUES ('w')"); });
    for (FakeReplica* r : replicas) {
      ASSERT_TRUE(WaitOnLoop([&] { return r->EntriesQueued() >= 1; })) << r->id;
    }
  }

  Bytes Read(uint64_t request_id, uint64_t min_seq, const proto::ClusterKey& key) {
    proto::Message m;
    proto::ReadRequest* r = m.mutable_read_request();
    r->set_request_id(request_id);
    r->mutable_statement()->set_sql("SELECT v FROM t");
    r->set_min_seq(min_seq);
    return proto::EnvelopeCodec(key).Seal("client-1", ++counter_, m);
  }
  Bytes Read(uint64_t request_id, uint64_t min_seq = 0) {
    return Read(request_id, min_seq, testing::TestKey());
  }
  void Send(Udp& from, const Bytes& datagram) { from.SendTo(router_->port(), datagram); }

  // What `replica` received next: the client named in the forward header and the request.
  struct Forwarded {
    proto::ForwardHeader header;
    Bytes envelope;
    uint64_t request_id = 0;
  };
  std::optional<Forwarded> NextForwarded(Udp& replica) {
    auto d = replica.Receive();
    if (!d) {
      ADD_FAILURE() << "nothing forwarded to the replica";
      return std::nullopt;
    }
    auto header = proto::DecodeForwardHeader(*d);
    if (!header.ok()) {
      ADD_FAILURE() << "no forward header: " << header.status().ToString();
      return std::nullopt;
    }
    Forwarded f{*header, Bytes(d->begin() + static_cast<ptrdiff_t>(header->size()), d->end())};
    auto opened = proto::EnvelopeCodec(testing::TestKey()).Open(f.envelope);
    if (!opened.ok() || !opened->message.has_read_request()) {
      ADD_FAILURE() << "the forwarded request does not open";
      return std::nullopt;
    }
    f.request_id = opened->message.read_request().request_id();
    return f;
  }
  // The director's own next answer to the client, opened and checked to come from it.
  std::optional<proto::ReadResponse> NextAnswer(Udp& client) {
    auto d = client.Receive();
    if (!d) {
      ADD_FAILURE() << "the director did not answer";
      return std::nullopt;
    }
    auto opened = proto::EnvelopeCodec(testing::TestKey()).Open(*d);
    if (!opened.ok() || opened->sender != "director" || !opened->message.has_read_response()) {
      ADD_FAILURE() << "the answer is not a ReadResponse sealed by the director";
      return std::nullopt;
    }
    return opened->message.read_response();
  }
  uint64_t Get(const Counter& c) {
    return OnLoop([&] { return c.Get(); });
  }
  const ReadRouterCounters& Counters() const { return router_->counters(); }

  std::unique_ptr<ReadRouter> router_;
  uint64_t counter_ = 0;
};

TEST_F(ReadRouterTest, AReadIsForwardedUnchangedToAnInSyncReplicaNamingTheClient) {
  Start();
  Udp rs1, rs2, client;
  FakeReplica a = JoinReplica("rs1", rs1);
  FakeReplica b = JoinReplica("rs2", rs2);
  // rs2's session ends: it is DOWN and no longer takes reads.
  OnLoop([&] {
    rep_->Detach(b.id, b.link.get());
    plane_.OnSessionClosed(b.id, b.session, clock_.Now());
  });
  for (uint64_t id = 1; id <= 3; ++id) {
    const Bytes datagram = Read(id);
    Send(client, datagram);
    auto f = NextForwarded(rs1);
    ASSERT_TRUE(f.has_value());
    EXPECT_EQ(f->envelope, datagram) << "the request must travel unchanged";
    EXPECT_EQ(f->header.client_ip, 0x7f000001u);
    EXPECT_EQ(f->header.client_port, client.port());
    EXPECT_EQ(f->request_id, id);
  }
  EXPECT_FALSE(rs2.Readable(0ms)) << "a read went to a replica that is DOWN";
  EXPECT_EQ(Get(Counters().forwarded), 3u);
}

TEST_F(ReadRouterTest, AReadWithMinSeqGoesOnlyToAReplicaThatAppliedIt) {
  Start();
  Udp rs1, rs2, client;
  FakeReplica a = JoinReplica("rs1", rs1);
  FakeReplica b = JoinReplica("rs2", rs2);
  SequenceOneWrite({&a, &b});
  OnLoop([&] { Deliver(a); });  // rs1 has applied seq 1, rs2 not yet
  for (uint64_t id = 1; id <= 6; ++id) {
    Send(client, Read(id, /*min_seq=*/1));
    auto f = NextForwarded(rs1);
    ASSERT_TRUE(f.has_value());
    EXPECT_EQ(f->request_id, id);
  }
  // Without min_seq the least-loaded replica takes it: rs2, which got none of the above (its
  // first datagram is this one).
  Send(client, Read(7));
  auto f = NextForwarded(rs2);
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->request_id, 7u) << "rs2 was sent a read it had not applied the seq of";
}

TEST_F(ReadRouterTest, AReadWaitsUntilAReplicaHasAppliedItsMinSeq) {
  Start();
  Udp rs1, client;
  FakeReplica a = JoinReplica("rs1", rs1);
  SequenceOneWrite({&a});
  Send(client, Read(9, /*min_seq=*/1));
  ASSERT_TRUE(WaitOnLoop([&] { return router_->queue_depth() == 1; }));
  EXPECT_FALSE(rs1.Readable(0ms)) << "forwarded before rs1 applied seq 1";
  OnLoop([&] { Deliver(a); });  // the ack reports progress: the held read goes now
  auto f = NextForwarded(rs1);
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->request_id, 9u);
  EXPECT_EQ(OnLoop([&] { return router_->queue_depth(); }), 0u);
  EXPECT_EQ(Get(Counters().queued), 1u);
}

TEST_F(ReadRouterTest, AMinSeqBeyondTheLastWriteIsAnsweredByTheDirectorAtOnce) {
  Start();
  Udp rs1, client;
  FakeReplica a = JoinReplica("rs1", rs1);
  Send(client, Read(4, /*min_seq=*/5));
  auto r = NextAnswer(client);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->request_id(), 4u);
  EXPECT_FALSE(r->ok());
  EXPECT_EQ(r->replica_id(), "director");
  EXPECT_NE(r->error().find("min_seq 5 is beyond the last sequenced write (0)"), std::string::npos)
      << r->error();
  EXPECT_FALSE(rs1.Readable(0ms));
  EXPECT_EQ(Get(Counters().refused_min_seq), 1u);
}

TEST_F(ReadRouterTest, WithNoReplicaAReadTimesOutWithAClearError) {
  ReadRouterOptions options;
  options.timeout = 2s;
  Start(options);
  Udp client;
  Send(client, Read(12));
  ASSERT_TRUE(WaitOnLoop([&] { return router_->queue_depth() == 1; }));
  // The router's timer runs in real time, its deadlines in the clock's: nothing expires yet.
  EXPECT_FALSE(client.Readable(150ms)) << "answered before the timeout passed";
  clock_.Advance(2s);
  auto r = NextAnswer(client);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->request_id(), 12u);
  EXPECT_FALSE(r->ok());
  EXPECT_EQ(r->error(),
            "timeout: no replica could serve the read within 2000 ms (no replica is ACTIVE and in "
            "sync)");
  EXPECT_EQ(Get(Counters().timed_out), 1u);
  EXPECT_EQ(OnLoop([&] { return router_->queue_depth(); }), 0u);
}

TEST_F(ReadRouterTest, AFullRequestQueueRefusesAtOnce) {
  ReadRouterOptions options;
  options.queue_capacity = 1;
  Start(options);
  Udp client;
  Send(client, Read(1));
  ASSERT_TRUE(WaitOnLoop([&] { return router_->queue_depth() == 1; }));
  Send(client, Read(2));
  auto r = NextAnswer(client);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->request_id(), 2u);
  EXPECT_FALSE(r->ok());
  EXPECT_EQ(r->error().rfind("overloaded", 0), 0u) << r->error();
  EXPECT_EQ(Get(Counters().refused_overload), 1u);
}

TEST_F(ReadRouterTest, UnauthenticatedAndGarbledDatagramsAreDroppedAndCounted) {
  Start();
  Udp rs1, client;
  FakeReplica a = JoinReplica("rs1", rs1);
  Send(client, Read(1, 0, testing::OtherKey()));
  Send(client, Bytes(64, 0x5a));  // no "VSE1" magic
  Send(client, Bytes(3, 0x56));   // shorter than any envelope
  Send(client, Read(3));
  // Datagrams are handled in order: the first thing rs1 sees is request 3.
  auto f = NextForwarded(rs1);
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->request_id, 3u) << "a datagram that does not open was forwarded";
  // Nor was the client answered: its first datagram answers request 4.
  Send(client, Read(4, /*min_seq=*/99));
  auto r = NextAnswer(client);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->request_id(), 4u) << "the director answered a datagram that does not open";
  EXPECT_EQ(Get(Counters().received), 5u);
  EXPECT_EQ(Get(Counters().dropped_unauthenticated), 1u);
  EXPECT_EQ(Get(Counters().dropped_malformed), 2u);
  EXPECT_EQ(Get(Counters().forwarded), 1u);
}

std::array<uint8_t, 16> Ipv6Loopback() {
  std::array<uint8_t, 16> a{};
  a[15] = 1;
  return a;
}

TEST_F(ReadRouterTest, AnIpv6ClientIsNamedToAnIpv6ReplicaInTheHeadersIpv6Form) {
  Start({}, "::1");
  Udp rs1(UdpFamily::kV6), client(UdpFamily::kV6);
  FakeReplica a = JoinReplica("rs1", rs1, "::1");
  const Bytes datagram = Read(1);
  Send(client, datagram);
  auto f = NextForwarded(rs1);
  ASSERT_TRUE(f.has_value());
  EXPECT_TRUE(f->header.ipv6);
  EXPECT_EQ(f->header.client_ip6, Ipv6Loopback());
  EXPECT_EQ(f->header.client_port, client.port());
  EXPECT_EQ(f->envelope, datagram) << "the request must travel unchanged after 24 bytes";
  // The director's own answers go back to the IPv6 client too.
  Send(client, Read(2, /*min_seq=*/9));
  auto r = NextAnswer(client);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->request_id(), 2u);
  EXPECT_EQ(Get(Counters().dropped_malformed), 0u);
}

TEST_F(ReadRouterTest, ADualStackPortServesBothFamiliesOfClientsAndReplicas) {
  Start({}, "::");
  Udp rs1, client4, client6(UdpFamily::kV6);
  FakeReplica a = JoinReplica("rs1", rs1);  // an IPv4 replica, reached IPv4-mapped
  Send(client4, Read(1));
  auto f = NextForwarded(rs1);
  ASSERT_TRUE(f.has_value());
  EXPECT_FALSE(f->header.ipv6) << "an IPv4 client (IPv4-mapped on the socket) gets the v1 form";
  EXPECT_EQ(f->header.client_ip, 0x7f000001u);
  EXPECT_EQ(f->header.client_port, client4.port());
  Send(client6, Read(2));
  f = NextForwarded(rs1);
  ASSERT_TRUE(f.has_value());
  EXPECT_TRUE(f->header.ipv6);
  EXPECT_EQ(f->header.client_ip6, Ipv6Loopback());
  EXPECT_EQ(f->request_id, 2u);
  EXPECT_EQ(Get(Counters().send_errors), 0u);
}

TEST_F(ReadRouterTest, AnIpv4PortDoesNotChooseAnIpv6Replica) {
  Start();
  Udp rs6(UdpFamily::kV6), rs4, client;
  FakeReplica a = JoinReplica("rs1", rs6, "::1");
  FakeReplica b = JoinReplica("rs2", rs4);
  for (uint64_t id = 1; id <= 4; ++id) {
    Send(client, Read(id));
    auto f = NextForwarded(rs4);
    ASSERT_TRUE(f.has_value());
    EXPECT_EQ(f->request_id, id);
  }
  EXPECT_FALSE(rs6.Readable(0ms)) << "an IPv4 socket cannot send to an IPv6 replica";
  EXPECT_EQ(Get(Counters().send_errors), 0u);
}

}  // namespace
}  // namespace vsc::director
