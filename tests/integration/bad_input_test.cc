// Bad input against a running cluster: malformed lookup datagrams to the director and to a real
// server, malformed TCP frames and HTTP requests to a real server, and control-plane messages
// sealed with a wrong key, replayed, malformed or oversized. Each is dropped (or answered with an
// error), counted exactly in /metrics, and never crashes or wedges a process.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>

#include "client/tcp_lookup_client.h"
#include "integration/cluster_harness.h"
#include "net/http_client.h"
#include "proto/cluster_key.h"
#include "proto/envelope.h"
#include "proto/frame.h"

namespace vsc::integration {
namespace {

using namespace std::chrono_literals;
using json = nlohmann::json;

// Lookup datagrams that are not valid requests, each with what is wrong with it.
std::vector<std::pair<std::string, std::vector<uint8_t>>> MalformedDatagrams() {
  std::vector<std::pair<std::string, std::vector<uint8_t>>> out;
  const std::vector<uint64_t> two = {1, 2};
  const std::vector<uint8_t> valid = EncodeLookup(7, two);
  out.push_back({"garbage", {'h', 'e', 'l', 'l', 'o', ' ', 'w', 'o', 'r', 'l', 'd'}});
  out.push_back({"empty", {}});
  out.push_back({"truncated", std::vector<uint8_t>(valid.begin(), valid.end() - 3)});
  out.push_back({"header only", std::vector<uint8_t>(valid.begin(), valid.begin() + 5)});
  std::vector<uint8_t> trailing = valid;
  trailing.push_back(0);
  out.push_back({"trailing byte", trailing});
  std::vector<uint8_t> count0(valid.begin(), valid.begin() + proto::kRequestHeaderSize);
  count0[proto::kRequestHeaderSize - 1] = 0;
  out.push_back({"count 0", count0});
  std::vector<uint8_t> count11(proto::RequestSize(11), 0);
  std::copy(valid.begin(), valid.begin() + proto::kRequestHeaderSize, count11.begin());
  count11[proto::kRequestHeaderSize - 1] = 11;
  for (size_t i = proto::kRequestHeaderSize; i < count11.size(); i += 8) count11[i + 7] = 1;
  out.push_back({"count 11", count11});
  std::vector<uint8_t> version = valid;
  version[2] = 9;
  out.push_back({"wrong version", version});
  std::vector<uint8_t> type = valid;
  type[3] = proto::kLookupTypeResponse;
  out.push_back({"a response", type});
  // A client must not be able to name another address for the answer: the director refuses a
  // request that carries a forward header.
  std::vector<uint8_t> forwarded(proto::kForwardHeaderSize);
  proto::EncodeForwardHeader({0x7f000001, 9, 0}, std::span<uint8_t, proto::kForwardHeaderSize>(
                                                     forwarded.data(), forwarded.size()));
  forwarded.insert(forwarded.end(), valid.begin(), valid.end());
  out.push_back({"forward header from a client", forwarded});
  // As large as the director's receive buffer takes whole: one byte over the datagram limit.
  std::vector<uint8_t> oversized(proto::kMaxLookupDatagram + 1, 0);
  std::copy(valid.begin(), valid.end(), oversized.begin());
  out.push_back({"oversized", oversized});
  return out;
}

class BadInputTest : public ClusterTest {
 protected:
  // Sends the datagrams to the director and waits until it has received all of them.
  void SendToDirector(const std::vector<std::vector<uint8_t>>& datagrams) {
    const double received = Metric("vsc_datagrams_received_total");
    auto probe = UdpProbe::Open();
    ASSERT_TRUE(probe.ok());
    for (const auto& d : datagrams) ASSERT_TRUE(probe->SendTo(cluster_->lookup_port(), d).ok());
    ASSERT_TRUE(WaitUntil(
        [&] { return Metric("vsc_datagrams_received_total") >= received + datagrams.size(); }, 3s))
        << "the director did not receive every datagram";
    EXPECT_FALSE(probe->Receive(50ms).has_value()) << "something answered a malformed request";
  }

  // Control-plane drop counters, in /metrics order.
  struct ControlDrops {
    double malformed, unauthenticated, replayed, oversize;
    double total() const { return malformed + unauthenticated + replayed + oversize; }
  };
  ControlDrops Drops() {
    const std::string m = Metrics();
    auto get = [&](const char* reason) {
      auto v = MetricValue(m, std::string("vsc_control_dropped_total{reason=\"") + reason + "\"}");
      EXPECT_TRUE(v.ok()) << v.status().ToString();
      return v.ok() ? *v : -1;
    };
    return {get("malformed"), get("unauthenticated"), get("replayed"), get("oversize")};
  }
  // Waits until `n` more control messages were dropped than in `base`, then returns the counts.
  ControlDrops WaitDrops(const ControlDrops& base, double n) {
    ControlDrops now = Drops();
    EXPECT_TRUE(WaitUntil(
        [&] {
          now = Drops();
          return now.total() >= base.total() + n;
        },
        3s))
        << "the director did not count every bad control message";
    return now;
  }

  // The cluster still serves through the director, and no process died.
  void ExpectClusterHealthy() {
    for (int i = 0; i < kServers; ++i) {
      EXPECT_TRUE(cluster_->server_running(i)) << cluster_->server_id(i) << " died";
    }
    EXPECT_EQ(::kill(cluster_->director_pid(), 0), 0) << "the director died";
    for (int i = 0; i < kServers; ++i) {
      EXPECT_TRUE(WaitForState(cluster_->server_id(i), "ACTIVE", 2s));
    }
    std::vector<int> per_server = UdpRoundTrips(30, 99);
    for (int i = 0; i < kServers; ++i) EXPECT_EQ(per_server[i], 10) << cluster_->server_id(i);
  }
};

// A blocking TCP connection to 127.0.0.1:port.
UniqueFd ConnectTcp(uint16_t port) {
  UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  to.sin_port = htons(port);
  if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&to), sizeof(to)) != 0) {
    ADD_FAILURE() << "connect 127.0.0.1:" << port << ": " << std::strerror(errno);
  }
  return fd;
}

void SendAll(int fd, std::span<const uint8_t> bytes) {
  while (!bytes.empty()) {
    ssize_t n = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // the peer may close early; the caller checks the close
    bytes = bytes.subspan(static_cast<size_t>(n));
  }
}

// True when the peer closes the connection (EOF or reset) within `timeout`; bytes it sends
// before closing are read and discarded.
bool PeerCloses(int fd, Duration timeout) {
  RealClock clock;
  const TimePoint deadline = clock.Now() + timeout;
  uint8_t buf[4096];
  while (clock.Now() < deadline) {
    pollfd p{fd, POLLIN, 0};
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock.Now());
    if (::poll(&p, 1, static_cast<int>(std::max<int64_t>(ms.count(), 0))) <= 0) continue;
    ssize_t n = ::recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
    if (n == 0) return true;
    if (n < 0 && (errno == ECONNRESET || errno == EPIPE)) return true;
  }
  return false;
}

std::vector<uint8_t> Framed(std::span<const uint8_t> payload) {
  std::vector<uint8_t> out;
  proto::AppendFrame(out, payload);
  return out;
}

proto::Message HeartbeatMessage(const std::string& id) {
  proto::Message m;
  proto::Heartbeat* hb = m.mutable_heartbeat();
  hb->set_id(id);
  hb->set_incarnation(1);
  hb->set_counter(1);
  return m;
}

proto::Message RegisterMessage(const std::string& id) {
  proto::Message m;
  proto::Register* reg = m.mutable_register_();
  reg->set_id(id);
  reg->set_incarnation(1);
  reg->set_weight(1);
  proto::Endpoint* e = reg->add_endpoints();
  e->set_service("lookup-udp");
  e->set_host("127.0.0.1");
  e->set_port(9);
  return m;
}

// ---- lookup datagrams ----

TEST_F(BadInputTest, MalformedDatagramsToTheDirectorAreDroppedAndCountedExactly) {
  ASSERT_NO_FATAL_FAILURE(StartCluster());
  const double malformed = Metric("vsc_datagrams_dropped_total{reason=\"malformed\"}");
  const double forwarded = Metric("vsc_datagrams_forwarded_total");
  std::vector<std::vector<uint8_t>> datagrams;
  for (const auto& [what, bytes] : MalformedDatagrams()) datagrams.push_back(bytes);
  ASSERT_NO_FATAL_FAILURE(SendToDirector(datagrams));
  EXPECT_EQ(Metric("vsc_datagrams_dropped_total{reason=\"malformed\"}") - malformed,
            static_cast<double>(datagrams.size()));
  EXPECT_EQ(Metric("vsc_datagrams_forwarded_total"), forwarded) << "garbage reached a server";
  ExpectClusterHealthy();
}

// A datagram larger than the director's receive buffer is truncated by the kernel. It must still
// be counted in /metrics, not vanish.
TEST_F(BadInputTest, DatagramLargerThanTheReceiveBufferIsCounted) {
  ASSERT_NO_FATAL_FAILURE(StartCluster());
  const double malformed = Metric("vsc_datagrams_dropped_total{reason=\"malformed\"}");
  std::vector<uint8_t> jumbo(4000, 0);
  const std::vector<uint8_t> valid = EncodeLookup(7, std::vector<uint64_t>{1});
  std::copy(valid.begin(), valid.end(), jumbo.begin());
  ASSERT_NO_FATAL_FAILURE(SendToDirector({jumbo}));
  EXPECT_EQ(Metric("vsc_datagrams_dropped_total{reason=\"malformed\"}") - malformed, 1);
  ExpectClusterHealthy();
}

TEST_F(BadInputTest, MalformedInputToARealServerIsRefusedWithoutACrash) {
  ASSERT_NO_FATAL_FAILURE(StartCluster());
  const uint16_t port = cluster_->server_lookup_port(0);
  auto probe = UdpProbe::Open();
  ASSERT_TRUE(probe.ok());
  for (const auto& [what, bytes] : MalformedDatagrams()) {
    ASSERT_TRUE(probe->SendTo(port, bytes).ok()) << what;
  }
  // A valid request after them: its answer arrives after any answer to the bad ones.
  const std::vector<uint64_t> ids = {3, kRecords + 3};
  ASSERT_TRUE(probe->SendTo(port, EncodeLookup(1234, ids)).ok());
  bool answered = false;
  while (auto d = probe->Receive(2s)) {
    auto r = proto::DecodeResponse(d->bytes);
    ASSERT_TRUE(r.ok()) << "undecodable answer: " << r.status().ToString();
    if (r->request_id == 1234) {
      EXPECT_EQ(r->status, proto::LookupStatus::kOk);
      EXPECT_TRUE(SharedOracle().Matches(ids, r->answers));
      answered = true;
      break;
    }
    EXPECT_NE(r->status, proto::LookupStatus::kOk) << "a malformed request got an ok answer";
  }
  EXPECT_TRUE(answered) << "the real server stopped answering after bad datagrams";

  // TCP: a frame over the limit and a frame that is not a request both end the connection.
  for (const uint32_t length : {uint32_t{1} << 20, uint32_t{5}}) {
    UniqueFd fd = ConnectTcp(port);
    std::vector<uint8_t> bytes = {static_cast<uint8_t>(length >> 24),
                                  static_cast<uint8_t>(length >> 16),
                                  static_cast<uint8_t>(length >> 8), static_cast<uint8_t>(length)};
    if (length == 5) bytes.insert(bytes.end(), {'h', 'e', 'l', 'l', 'o'});
    SendAll(fd.get(), bytes);
    EXPECT_TRUE(PeerCloses(fd.get(), 2s)) << "frame length " << length;
  }
  auto client = client::TcpLookupClient::Connect("127.0.0.1", port, 2s);
  ASSERT_TRUE(client.ok());
  auto answers = client->Lookup(ids);
  ASSERT_TRUE(answers.ok()) << answers.status().ToString();
  EXPECT_TRUE(SharedOracle().Matches(ids, *answers));

  // HTTP: bad id lists are answered 400, unknown paths 404.
  for (const char* target :
       {"/v1/resources/", "/v1/resources/abc", "/v1/resources/1,,2",
        "/v1/resources/1,2,3,4,5,6,7,8,9,10,11", "/v1/resources/99999999999999999999999"}) {
    auto r =
        net::HttpRequestSync("127.0.0.1", cluster_->server_http_port(0), "GET", target, "", {}, 2s);
    ASSERT_TRUE(r.ok()) << target << ": " << r.status().ToString();
    EXPECT_EQ(r->status, 400) << target << ": " << r->body;
  }
  auto nowhere = net::HttpRequestSync("127.0.0.1", cluster_->server_http_port(0), "GET", "/nowhere",
                                      "", {}, 2s);
  ASSERT_TRUE(nowhere.ok());
  EXPECT_EQ(nowhere->status, 404);
  ExpectClusterHealthy();
}

TEST_F(BadInputTest, UnknownIdsAreAnsweredNotFoundOverUdpAndTcp) {
  ASSERT_NO_FATAL_FAILURE(StartCluster());
  const std::vector<uint64_t> unknown = {0, kRecords + 1, 123456789, UINT64_MAX};
  auto probe = UdpProbe::Open();
  ASSERT_TRUE(probe.ok());
  ASSERT_TRUE(probe->SendTo(cluster_->lookup_port(), EncodeLookup(77, unknown)).ok());
  auto d = probe->Receive(2s);
  ASSERT_TRUE(d.has_value());
  auto r = proto::DecodeResponse(d->bytes);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, proto::LookupStatus::kOk);
  ASSERT_EQ(r->answers.size(), unknown.size());
  for (size_t i = 0; i < unknown.size(); ++i) {
    EXPECT_EQ(r->answers[i].id, unknown[i]);
    EXPECT_FALSE(r->answers[i].found);
    EXPECT_EQ(r->answers[i].node, "");
  }
  auto client = client::TcpLookupClient::Connect("127.0.0.1", cluster_->lookup_port(), 2s);
  ASSERT_TRUE(client.ok());
  auto answers = client->Lookup(unknown);
  ASSERT_TRUE(answers.ok()) << answers.status().ToString();
  EXPECT_TRUE(SharedOracle().Matches(unknown, *answers));
  // The client library refuses 0 and 11 ids before sending anything.
  for (size_t n : {size_t{0}, size_t{11}}) {
    auto refused = client->Lookup(std::vector<uint64_t>(n, 1));
    ASSERT_FALSE(refused.ok()) << n << " ids were sent";
    EXPECT_EQ(refused.status().code(), Code::kInvalidArgument) << refused.status().ToString();
    EXPECT_NE(refused.status().message().find("send 1 to 10 ids per request"), std::string::npos)
        << refused.status().message();
  }
}

// ---- control plane ----

TEST_F(BadInputTest, ForgedReplayedMalformedAndOversizedControlMessagesAreDroppedAndCounted) {
  ASSERT_NO_FATAL_FAILURE(StartCluster());
  auto key = proto::ClusterKey::FromHex(cluster_->key_hex());
  ASSERT_TRUE(key.ok());
  auto wrong_key = proto::ClusterKey::Generate();
  ASSERT_TRUE(wrong_key.ok());
  ASSERT_FALSE(*wrong_key == *key);
  auto probe = UdpProbe::Open();
  ASSERT_TRUE(probe.ok());
  const uint16_t hb_port = cluster_->heartbeat_port();

  // A heartbeat for a real server under the wrong key: unauthenticated.
  ControlDrops base = Drops();
  ASSERT_TRUE(
      probe->SendTo(hb_port, proto::Seal(*wrong_key, "rs1", 1, HeartbeatMessage("rs1"))).ok());
  ControlDrops now = WaitDrops(base, 1);
  EXPECT_EQ(now.unauthenticated - base.unauthenticated, 1);
  EXPECT_EQ(now.total() - base.total(), 1);

  // The same sealed heartbeat twice (right key, a sender of its own so no real server's replay
  // window moves): the first passes authentication and is ignored as unknown, the second is a
  // replay.
  const double unknown = Metric("vsc_heartbeats_ignored_total{reason=\"unknown\"}");
  const std::vector<uint8_t> sealed = proto::Seal(*key, "probe", 1000, HeartbeatMessage("probe"));
  base = Drops();
  ASSERT_TRUE(probe->SendTo(hb_port, sealed).ok());
  ASSERT_TRUE(probe->SendTo(hb_port, sealed).ok());
  now = WaitDrops(base, 1);
  EXPECT_EQ(now.replayed - base.replayed, 1);
  EXPECT_EQ(now.total() - base.total(), 1);
  EXPECT_EQ(Metric("vsc_heartbeats_ignored_total{reason=\"unknown\"}") - unknown, 1);
  // An older counter from the same sender, below the window, is a replay too.
  base = Drops();
  ASSERT_TRUE(probe
                  ->SendTo(hb_port, proto::Seal(*key, "probe", 1000 - proto::ReplayGuard::kWindow,
                                                HeartbeatMessage("probe")))
                  .ok());
  now = WaitDrops(base, 1);
  EXPECT_EQ(now.replayed - base.replayed, 1);

  // Malformed heartbeats: not an envelope; a heartbeat naming another server than its sender;
  // a sealed message that is not a heartbeat.
  base = Drops();
  const std::vector<uint8_t> garbage = {'V', 'S', 'E', '1', 0, 1, 2, 3};
  ASSERT_TRUE(probe->SendTo(hb_port, garbage).ok());
  ASSERT_TRUE(
      probe->SendTo(hb_port, proto::Seal(*key, "probe", 2000, HeartbeatMessage("rs1"))).ok());
  ASSERT_TRUE(
      probe->SendTo(hb_port, proto::Seal(*key, "probe", 2001, RegisterMessage("probe"))).ok());
  now = WaitDrops(base, 3);
  EXPECT_EQ(now.malformed - base.malformed, 3);
  EXPECT_EQ(now.total() - base.total(), 3);

  // A registration under the wrong key: unauthenticated, session closed, nobody registered.
  base = Drops();
  {
    UniqueFd fd = ConnectTcp(cluster_->control_port());
    SendAll(fd.get(), Framed(proto::Seal(*wrong_key, "intruder", 1, RegisterMessage("intruder"))));
    EXPECT_TRUE(PeerCloses(fd.get(), 2s)) << "the director kept a forged session open";
  }
  now = WaitDrops(base, 1);
  EXPECT_EQ(now.unauthenticated - base.unauthenticated, 1);
  EXPECT_EQ(State("intruder"), "");

  // Oversized frames on the control port: counted, connection closed before any body. No
  // frame can be longer than the largest envelope a sender can seal.
  for (const uint64_t length : {uint64_t{proto::kMaxEnvelopeBytes} + 1, uint64_t{0xFFFFFFF0}}) {
    base = Drops();
    {
      UniqueFd fd = ConnectTcp(cluster_->control_port());
      const std::vector<uint8_t> header = {
          static_cast<uint8_t>(length >> 24), static_cast<uint8_t>(length >> 16),
          static_cast<uint8_t>(length >> 8), static_cast<uint8_t>(length)};
      SendAll(fd.get(), header);
      EXPECT_TRUE(PeerCloses(fd.get(), 2s))
          << "the director waited for a control frame of " << length << " bytes";
    }
    now = WaitDrops(base, 1);
    EXPECT_EQ(now.oversize - base.oversize, 1) << length;
    EXPECT_EQ(now.total() - base.total(), 1) << length;
  }

  // A frame that is not an envelope: malformed, connection closed.
  base = Drops();
  {
    UniqueFd fd = ConnectTcp(cluster_->control_port());
    const std::vector<uint8_t> junk = {'n', 'o', 't', ' ', 'a', 'n', ' ', 'e', 'n', 'v'};
    SendAll(fd.get(), Framed(junk));
    EXPECT_TRUE(PeerCloses(fd.get(), 2s));
  }
  now = WaitDrops(base, 1);
  EXPECT_EQ(now.malformed - base.malformed, 1);

  // A replayed registration: the real rs1's identity cannot be taken over by resending an old
  // sealed Register (here: one sealed with a counter far below anything rs1 has used).
  base = Drops();
  {
    UniqueFd fd = ConnectTcp(cluster_->control_port());
    SendAll(fd.get(), Framed(proto::Seal(*key, "rs1", 1, RegisterMessage("rs1"))));
    EXPECT_TRUE(PeerCloses(fd.get(), 2s));
  }
  now = WaitDrops(base, 1);
  EXPECT_EQ(now.replayed - base.replayed, 1);

  // None of it disturbed the real servers: still registered, heartbeating, serving.
  EXPECT_EQ(Metric("vsc_control_sessions"), kServers);
  EXPECT_EQ(Metric("vsc_registrations_refused_total"), 0);
  ExpectClusterHealthy();
  const json status = AdminStatus();
  for (int i = 0; i < kServers; ++i) {
    const json* s = FindServer(status, 0, cluster_->server_id(i));
    ASSERT_NE(s, nullptr);
    EXPECT_EQ((*s)["address"], "127.0.0.1:" + std::to_string(cluster_->server_lookup_port(i)))
        << "a forged registration changed " << cluster_->server_id(i);
  }
}

}  // namespace
}  // namespace vsc::integration
