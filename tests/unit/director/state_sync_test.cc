// State sync (issue 11): the records' wire form, the daemon between two sockets on loopback,
// the persistence table every worker shares, and what an engine does with a peer's records.
#include "director/state_sync.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

#include "director/session_hints.h"
#include "director/shared_persistence.h"
#include "director/sync_codec.h"
#include "proto/envelope.h"
#include "sched/hash.h"
#include "service_engine_fixture.h"
#include "support/tcp_request.h"

namespace vsc::director {
namespace {

using engine_test::Local;
using engine_test::Loop;
using engine_test::Request;
using engine_test::ServiceEngineTest;
using std::chrono::milliseconds;
using testing::TcpTestServer;
using vservice::AddrPort;
using vservice::IpAddress;
using vservice::ServiceKey;

SyncRecord Template(uint32_t key, uint16_t dest_port) {
  SyncRecord r;
  r.kind = SyncKind::kTemplate;
  r.service = {vservice::Proto::kTcp, IpAddress::V4(0x0a000001), 80};
  r.client = {IpAddress::V4(key), 0};
  r.dest = {IpAddress::V4(0x0a000100), dest_port};
  r.expires_in = milliseconds(300000);
  return r;
}

SyncRecord Session(const AddrPort& client, const AddrPort& dest) {
  SyncRecord r;
  r.kind = SyncKind::kUdpSession;
  r.service = {vservice::Proto::kUdp, *IpAddress::Parse("2001:db8::1"), 53};
  r.client = client;
  r.dest = dest;
  r.expires_in = milliseconds(1500);
  return r;
}

TEST(SyncCodec, RecordsComeBackAsTheyWentInBatchesThatFitADatagram) {
  std::vector<SyncRecord> in;
  for (uint32_t i = 0; i < 1000; ++i) in.push_back(Template(0xc0a80000 + i, 8000 + i % 7));
  in.push_back(
      Session({*IpAddress::Parse("2001:db8::7"), 5353}, {*IpAddress::Parse("2001:db8::100"), 53}));
  const std::vector<proto::Message> packed = PackSync(in);
  ASSERT_GT(packed.size(), 20u);  // about 40 bytes a template
  std::vector<SyncRecord> out;
  for (const proto::Message& m : packed) {
    ASSERT_TRUE(m.has_sync_batch());
    EXPECT_LE(m.sync_batch().ByteSizeLong(), kMaxSyncBatchBytes);
    UnpackedSync u = UnpackSync(m.sync_batch());
    EXPECT_EQ(u.malformed, 0u);
    out.insert(out.end(), u.records.begin(), u.records.end());
  }
  EXPECT_EQ(out, in);
}

TEST(SyncCodec, ARecordThatDoesNotDecodeIsSkippedAndCounted) {
  const std::vector<proto::Message> packed = PackSync(std::vector{Template(1, 80)});
  proto::SyncBatch batch = packed.at(0).sync_batch();
  auto bad = [&](auto edit) { edit(*batch.add_records() = batch.records(0)); };
  bad([](proto::SyncRecord& r) { r.set_kind(3); });
  bad([](proto::SyncRecord& r) { r.set_protocol(1); });
  bad([](proto::SyncRecord& r) { r.set_vip("12345"); });
  bad([](proto::SyncRecord& r) { r.set_dest_port(70000); });
  bad([](proto::SyncRecord& r) { r.set_client("123"); });
  bad([](proto::SyncRecord& r) { r.set_client_port(5); });  // a template names a network
  bad([](proto::SyncRecord& r) { r.set_expires_in_ms(0); });
  bad([](proto::SyncRecord& r) { r.set_expires_in_ms(2700000000u); });  // over 31 days
  const UnpackedSync u = UnpackSync(batch);
  EXPECT_EQ(u.malformed, 8u);
  ASSERT_EQ(u.records.size(), 1u);
  EXPECT_EQ(u.records[0], Template(1, 80));
}

TEST(SyncCodec, AnIpv6TemplateTravelsWithItsWholeNetwork) {
  SyncRecord t = Template(0, 80);
  t.service.vip = *IpAddress::Parse("2001:db8::fe");
  t.client = {*IpAddress::Parse("2001:db8:1:2::"), 0};
  t.dest = {*IpAddress::Parse("2001:db8::1"), 80};
  const std::vector<proto::Message> packed = PackSync(std::vector{t});
  ASSERT_EQ(packed.size(), 1u);
  EXPECT_EQ(packed[0].sync_batch().records(0).client().size(), 16u);
  const UnpackedSync u = UnpackSync(packed[0].sync_batch());
  EXPECT_EQ(u.malformed, 0u);
  ASSERT_EQ(u.records.size(), 1u);
  EXPECT_EQ(u.records[0], t);
}

TEST(SessionHints, AHintIsTakenOnceAndOnlyWhileItLives) {
  ManualClock clock;
  SessionHints hints(2);
  const AddrPort a{IpAddress::V4(1), 1}, b{IpAddress::V4(2), 2}, c{IpAddress::V4(3), 3};
  const AddrPort dest{IpAddress::V4(9), 9};
  hints.Adopt(a, dest, clock.Now() + milliseconds(100), clock.Now());
  hints.Adopt(b, dest, clock.Now() + milliseconds(50), clock.Now());
  hints.Adopt(c, dest, clock.Now() + milliseconds(100), clock.Now());  // full of live hints
  EXPECT_EQ(hints.dropped(), 1u);
  EXPECT_EQ(hints.Take(a, clock.Now()), dest);
  EXPECT_EQ(hints.Take(a, clock.Now()), std::nullopt);  // used up
  clock.Advance(milliseconds(50));
  EXPECT_EQ(hints.Take(b, clock.Now()), std::nullopt);  // expired
  EXPECT_EQ(hints.size(), 0u);
}

// Two daemons on loopback under one key: what one's workers note reaches the other whole; a
// datagram under another key, or one sent again, is refused and counted.
TEST(StateSync, NotedRecordsReachThePeerAndForgeriesAndReplaysAreRefused) {
  Loop loop;
  const proto::ClusterKey key = *proto::ClusterKey::FromHex(std::string(64, 'a'));
  auto outbox_a = std::make_shared<SyncOutbox>();
  auto outbox_b = std::make_shared<SyncOutbox>();
  std::vector<SyncRecord> at_b;
  std::mutex mu;
  auto b = std::make_shared<StateSync>(loop.io(), key, StateSyncOptions{}, outbox_b,
                                       [&](const SyncRecord& r) {
                                         std::lock_guard lock(mu);
                                         at_b.push_back(r);
                                         return true;
                                       });
  ASSERT_TRUE(loop.Run([&] { return b->Start(); }).ok());
  StateSyncOptions oa;
  oa.peers = {"127.0.0.1:" + std::to_string(b->port())};
  auto a = std::make_shared<StateSync>(loop.io(), key, oa, outbox_a,
                                       [](const SyncRecord&) { return true; });
  ASSERT_TRUE(loop.Run([&] { return a->Start(); }).ok());
  std::vector<SyncRecord> sent;
  for (uint32_t i = 0; i < 100; ++i) sent.push_back(Template(i, 80));
  sent.push_back(Session({IpAddress::V4(0x7f000001), 4000}, {IpAddress::V4(0x7f000002), 53}));
  for (const SyncRecord& r : sent) outbox_a->Note(r);
  ASSERT_TRUE(engine_test::Eventually([&] {
    std::lock_guard lock(mu);
    return at_b.size() == sent.size();
  }));
  EXPECT_EQ(at_b, sent);

  // A forgery (another key) and a replay of a datagram B accepted already.
  asio::ip::udp::socket raw(loop.io(), {asio::ip::address_v4::loopback(), 0});
  const asio::ip::udp::endpoint to(asio::ip::address_v4::loopback(), b->port());
  const proto::Message m = PackSync(std::vector{Template(7, 80)}).at(0);
  const proto::ClusterKey other = *proto::ClusterKey::FromHex(std::string(64, 'b'));
  raw.send_to(asio::buffer(proto::Seal(other, "forger", 1, m)), to);
  const std::vector<uint8_t> once = proto::Seal(key, "peer", 1, m);
  raw.send_to(asio::buffer(once), to);
  raw.send_to(asio::buffer(once), to);
  raw.send_to(asio::buffer(std::string("not an envelope")), to);
  ASSERT_TRUE(engine_test::Eventually(
      [&] { return loop.Run([&] { return b->counters().refused_datagrams; }) == 3; }));
  EXPECT_EQ(loop.Run([&] { return b->counters().received_records; }), sent.size() + 1);
  EXPECT_GT(loop.Run([&] { return a->counters().sent_bytes; }), 0u);
  const std::string metrics = loop.Run([&] { return b->RenderMetrics(); });
  EXPECT_NE(metrics.find("vsc_director_sync_datagrams_total{event=\"refused\"} 3"),
            std::string::npos);
  loop.Run([&] {
    a->Stop();
    b->Stop();
    return 0;
  });
}

// One request from the source address 127.0.0.`host`: the name of the server that answered.
std::string RequestFrom(uint8_t host, uint16_t port) {
  return test_support::TcpRequest(port, "ping", 0x7f000000u | host);
}

class SyncEngineTest : public ServiceEngineTest {
 protected:
  // A persistent rr TCP service over three servers "A", "B", "C".
  void StartPersistent() {
    for (const char* name : {"A", "B", "C"}) {
      servers_.push_back(Server(TcpTestServer::Mode::kRespond, name));
    }
    vservice::VirtualServiceTable t;
    vservice::ServiceConfig c;
    c.scheduler = "rr";
    c.persistence = vservice::Persistence{300, 32};
    ASSERT_TRUE(t.AddService(Key(), c).ok());
    for (auto& s : servers_) ASSERT_TRUE(t.AddDest(Key(), Local(s->endpoint().port()), {}).ok());
    ASSERT_TRUE(Commit(t).ok());
  }
  AddrPort Dest(size_t i) { return Local(servers_[i]->endpoint().port()); }
  ~SyncEngineTest() override {
    for (auto& s : servers_) Close(s);
  }
  std::vector<std::unique_ptr<TcpTestServer>> servers_;
};

// The kernel spreads one client's connections over both workers (SO_REUSEPORT hashes the
// source port): one table for the two keeps each client on one server, as LVS does.
TEST_F(SyncEngineTest, EveryWorkerSendsAPersistentClientToTheSameServer) {
  StartPersistent();
  std::map<uint8_t, std::set<std::string>> seen;
  for (int round = 0; round < 6; ++round) {
    for (uint8_t host = 10; host < 20; ++host) seen[host].insert(RequestFrom(host, port_));
  }
  std::set<std::string> servers;
  for (const auto& [host, answers] : seen) {
    EXPECT_EQ(answers.size(), 1u) << "127.0.0." << int(host) << " reached " << answers.size();
    servers.insert(*answers.begin());
  }
  EXPECT_EQ(servers.size(), 3u);  // rr spread the ten clients
}

// A peer's templates send their clients where the peer sent them, against the scheduler's
// own choice; a record for a service or a destination this engine does not run is ignored.
TEST_F(SyncEngineTest, APeersTemplatesAreFollowedAndUnknownOnesIgnored) {
  StartPersistent();
  const char* names[] = {"A", "B", "C"};
  for (uint8_t host = 30; host < 39; ++host) {
    SyncRecord r;
    r.kind = SyncKind::kTemplate;
    r.service = Key();
    r.client = {IpAddress::V4(0x7f000000u | host), 0};
    r.dest = Dest(2 - host % 3);  // against rr's A, B, C order
    r.expires_in = milliseconds(60000);
    EXPECT_TRUE(control_.Run([&] { return engine_->AdoptSynced(r); }));
  }
  for (uint8_t host = 30; host < 39; ++host) {
    EXPECT_EQ(RequestFrom(host, port_), names[2 - host % 3]) << "127.0.0." << int(host);
  }
  SyncRecord unknown;
  unknown.service = Key();
  unknown.client = {IpAddress::V4(0x7f000028), 0};
  unknown.dest = Local(1);  // not a destination of the service
  unknown.expires_in = milliseconds(60000);
  EXPECT_FALSE(control_.Run([&] { return engine_->AdoptSynced(unknown); }));
  unknown.dest = Dest(0);
  unknown.service.port ^= 1;  // not a service of this engine
  EXPECT_FALSE(control_.Run([&] { return engine_->AdoptSynced(unknown); }));
}

// With sync on, new templates and UDP sessions are noted for the peers; a peer's UDP session
// sends its client's first datagram to the peer's destination.
TEST_F(SyncEngineTest, TemplatesAndSessionsAreNotedAndAPeersSessionIsFollowed) {
  auto outbox = std::make_shared<SyncOutbox>();
  EngineOptions eo;
  eo.sync = outbox;
  Reopen(std::move(eo));
  StartPersistent();
  const std::string server = RequestFrom(50, port_);
  ASSERT_EQ(server.size(), 1u);
  EXPECT_EQ(RequestFrom(50, port_), server);  // a refresh soon after: not noted again
  std::vector<SyncRecord> noted = outbox->Take();
  ASSERT_EQ(noted.size(), 1u);
  EXPECT_EQ(noted[0].kind, SyncKind::kTemplate);
  EXPECT_EQ(noted[0].client, (vservice::AddrPort{IpAddress::V4(0x7f000032u), 0}));
  EXPECT_EQ(noted[0].dest, Dest(static_cast<size_t>(server[0] - 'A')));
  EXPECT_EQ(noted[0].expires_in, milliseconds(300000));

  std::vector<std::unique_ptr<testing::UdpEcho>> echoes;
  for (int i = 0; i < 2; ++i) {
    echoes.push_back(
        backends_.Run([&] { return std::make_unique<testing::UdpEcho>(backends_.io()); }));
  }
  const ServiceKey udp{vservice::Proto::kUdp, IpAddress::V4(0x7f000001), engine_test::FreePort()};
  vservice::VirtualServiceTable t = control_.Run([&] { return engine_->table(); });
  vservice::ServiceConfig rr;
  rr.scheduler = "rr";
  ASSERT_TRUE(t.AddService(udp, rr).ok());
  for (auto& e : echoes) ASSERT_TRUE(t.AddDest(udp, Local(e->endpoint().port()), {}).ok());
  ASSERT_TRUE(Commit(t).ok());
  asio::io_context io;
  asio::ip::udp::socket c(io, {asio::ip::address_v4::loopback(), 0});
  c.connect({asio::ip::address_v4::loopback(), udp.port});
  const AddrPort client = Local(c.local_endpoint().port());
  SyncRecord hint;
  hint.kind = SyncKind::kUdpSession;
  hint.service = udp;
  hint.client = client;
  hint.dest = Local(echoes[1]->endpoint().port());  // rr's first pick would be echoes[0]
  hint.expires_in = milliseconds(60000);
  ASSERT_TRUE(control_.Run([&] { return engine_->AdoptSynced(hint); }));
  timeval two_seconds{2, 0};
  ::setsockopt(c.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &two_seconds, sizeof(two_seconds));
  c.send(asio::buffer(std::string("hi")));
  char buf[16];
  asio::error_code ec;
  c.receive(asio::buffer(buf), 0, ec);
  ASSERT_FALSE(ec) << ec.message();
  const ServiceRuntime r = Runtime(udp);
  ASSERT_EQ(r.dests.size(), 2u);
  for (const DestRuntime& d : r.dests) {
    EXPECT_EQ(d.packets_in, d.dest == hint.dest ? 1u : 0u) << vservice::ToString(d.dest);
  }
  noted = outbox->Take();
  ASSERT_EQ(noted.size(), 1u);  // the session this engine opened, for its own peers
  EXPECT_EQ(noted[0].kind, SyncKind::kUdpSession);
  EXPECT_EQ(noted[0].client, client);
  EXPECT_EQ(noted[0].dest, hint.dest);
  for (auto& e : echoes) {
    backends_.Run([&] {
      e.reset();
      return 0;
    });
  }
}

}  // namespace
}  // namespace vsc::director
