// The control session's freshness rules across restarts, in one process with clocks the test
// steps back (issue 10): a real server restarted with its wall clock stepped back registers and
// heartbeats although its counters and incarnation are below the old process's; the old
// process's Register and heartbeat, replayed, neither take the id nor poison the new process's
// windows; a director restarted with its clock stepped back is still believed by the agent.
#include <arpa/inet.h>
#include <gtest/gtest.h>

#include "unit/director/control_session_harness.h"

namespace vsc::director {
namespace {

using namespace std::chrono_literals;
using testing::AgentProcess;
using testing::Bytes;
using testing::Director;
using testing::Eventually;
using testing::Framed;
using testing::Key;
using testing::kHour;
using testing::kWall;
using testing::RawSession;

proto::Message RegisterOf(uint64_t incarnation, const proto::Nonce& challenge) {
  proto::Message m;
  proto::Register* r = m.mutable_register_();
  r->set_id("rs1");
  r->set_incarnation(incarnation);
  r->set_weight(1);
  proto::Endpoint* e = r->add_endpoints();
  e->set_service("lookup-udp");
  e->set_host("127.0.0.1");
  e->set_port(7001);
  r->set_challenge(proto::NonceString(challenge));
  return m;
}

void SendDatagram(uint16_t port, const Bytes& bytes) {
  UniqueFd fd(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  to.sin_port = htons(port);
  ASSERT_GT(::sendto(fd.get(), bytes.data(), bytes.size(), 0, reinterpret_cast<sockaddr*>(&to),
                     sizeof(to)),
            0);
}

TEST(ControlSessionTest, RestartWithTheClockSteppedBackIsWelcomeAndReplaysOfTheOldOneFail) {
  Director director(kWall, 0);
  proto::EnvelopeCodec codec(Key());
  const uint64_t old_incarnation = kWall;
  Bytes old_register, old_heartbeat;
  {
    // The old process, by hand: registers, heartbeats once (both recorded), then dies.
    RawSession old(director.control_port());
    auto challenge = proto::ParseChallenge(old.Next());
    ASSERT_TRUE(challenge.ok()) << challenge.status().ToString();
    old_register = Framed(codec.Seal("rs1", kWall, RegisterOf(old_incarnation, *challenge)));
    old.Send(old_register);
    auto ack = codec.Open(old.Next());
    ASSERT_TRUE(ack.ok() && ack->message.register_ack().accepted());
    proto::Message hb;
    hb.mutable_heartbeat()->set_id("rs1");
    hb.mutable_heartbeat()->set_incarnation(old_incarnation);
    hb.mutable_heartbeat()->set_counter(1);
    old_heartbeat = codec.Seal("rs1", kWall + 1, hb);
    SendDatagram(director.heartbeat_port(), old_heartbeat);
    ASSERT_TRUE(Eventually([&] { return director.State("rs1") == "ACTIVE"; }));
  }
  ASSERT_TRUE(Eventually([&] { return director.State("rs1") == "DOWN"; }));

  // The new process's clock is an hour behind: lower incarnation, lower counters.
  AgentProcess agent(kWall - kHour, director.control_port());
  ASSERT_TRUE(Eventually([&] { return director.State("rs1") == "ACTIVE"; }))
      << "a restart with the clock stepped back was locked out";
  EXPECT_EQ(director.Incarnation("rs1"), static_cast<uint64_t>(kWall - kHour));

  // The old Register, replayed on a new session, fails the challenge: auth-failed, closed.
  const uint64_t replayed = director.Replayed();
  {
    RawSession attacker(director.control_port());
    ASSERT_TRUE(proto::ParseChallenge(attacker.Next()).ok());
    attacker.Send(old_register);
    EXPECT_TRUE(proto::IsAuthFailed(attacker.Next()));
    EXPECT_TRUE(attacker.Next().empty()) << "the session stayed open";
  }
  EXPECT_EQ(director.Replayed(), replayed + 1);
  // The old heartbeat, replayed: ignored, and the new process's heartbeats still count.
  const uint64_t ignored = director.HeartbeatsIgnored();
  SendDatagram(director.heartbeat_port(), old_heartbeat);
  EXPECT_TRUE(Eventually([&] { return director.HeartbeatsIgnored() == ignored + 1; }));
  const uint64_t accepted = director.HeartbeatsAccepted();
  EXPECT_TRUE(Eventually([&] { return director.HeartbeatsAccepted() >= accepted + 3; }));
  EXPECT_EQ(director.State("rs1"), "ACTIVE");
  EXPECT_EQ(director.Incarnation("rs1"), static_cast<uint64_t>(kWall - kHour));
}

TEST(ControlSessionTest, AnAgentBelievesADirectorRestartedWithItsClockSteppedBack) {
  auto first = std::make_unique<Director>(kWall, 0);
  const uint16_t port = first->control_port();
  AgentProcess agent(kWall, port);
  ASSERT_TRUE(Eventually([&] { return first->State("rs1") == "ACTIVE"; }));
  first.reset();
  // The new director's counters start an hour below everything the old one sent.
  Director second(kWall - kHour, port);
  ASSERT_TRUE(Eventually([&] { return second.State("rs1") == "ACTIVE"; }));
  // Its messages on the session are believed: the agent acts on "removed".
  ASSERT_TRUE(second.Remove("rs1").ok());
  EXPECT_TRUE(Eventually([&] { return agent.exit_code() == 0; }));
  // ...from the Command itself, not from a refusal after reconnecting, which is what an agent
  // that dropped the Command as a replay would end up with.
  EXPECT_EQ(second.Refusals(proto::RegisterAck::REFUSAL_REMOVED), 0u)
      << "the agent dropped the restarted director's Command as a replay";
}

// An ack that was not sealed for this session (a replay of an old one) registers nothing.
TEST(ControlSessionTest, AnAgentIgnoresARegisterAckNotSealedForItsSession) {
  asio::io_context io;
  asio::ip::tcp::acceptor acceptor(
      io, asio::ip::tcp::endpoint(asio::ip::make_address_v4("127.0.0.1"), 0));
  const uint16_t port = acceptor.local_endpoint().port();
  AgentProcess agent(kWall, port);
  asio::ip::tcp::socket s(io);
  pollfd first{acceptor.native_handle(), POLLIN, 0};
  ASSERT_EQ(::poll(&first, 1, 3000), 1) << "the agent did not connect";
  acceptor.accept(s);
  const Bytes challenge = proto::ChallengeFrame(proto::NewNonce());
  asio::write(s, asio::buffer(challenge));
  proto::FrameDecoder decoder(proto::kMaxEnvelopeBytes);
  std::vector<uint8_t> buf(64 * 1024);
  std::optional<Bytes> reg;
  while (!reg) {
    const size_t n = s.read_some(asio::buffer(buf));
    decoder.Feed(std::span<const uint8_t>(buf.data(), n));
    auto f = decoder.Next();
    ASSERT_TRUE(f.ok());
    if (f->has_value()) reg = **f;
  }
  proto::EnvelopeCodec codec(Key());
  auto opened = codec.Open(*reg);
  ASSERT_TRUE(opened.ok());
  EXPECT_EQ(opened->message.register_().agent_nonce().size(), proto::kNonceBytes);
  proto::Message ack;
  ack.mutable_register_ack()->set_accepted(true);
  ack.mutable_register_ack()->set_heartbeat_interval_ms(50);
  ack.mutable_register_ack()->set_agent_nonce(std::string(proto::kNonceBytes, 'x'));  // not its
  asio::write(s, asio::buffer(Framed(codec.Seal("director", 1, ack))));
  // The agent closes the session and tries again on a new connection.
  pollfd p{acceptor.native_handle(), POLLIN, 0};
  ASSERT_EQ(::poll(&p, 1, 3000), 1) << "the agent took the foreign ack and kept the session";
  asio::ip::tcp::socket second(io);
  acceptor.accept(second);
  EXPECT_EQ(agent.exit_code(), -1);
}

// ---- The control server's handling of what does not open (issue 10: glue only integration
// reached). Each refusal is counted under its own name.

proto::ClusterKey OtherKey() { return proto::ClusterKey::FromHex(std::string(64, 'c')).value(); }

TEST(ControlServerTest, AFrameThatIsNoEnvelopeIsRefusedWithAuthFailedAndClosed) {
  Director director(kWall, 0);
  const auto before = director.Dropped();
  RawSession s(director.control_port());
  ASSERT_TRUE(proto::ParseChallenge(s.Next()).ok());
  s.Send(Framed(Bytes(100, 0x5a)));
  EXPECT_TRUE(proto::IsAuthFailed(s.Next()));
  EXPECT_TRUE(s.Next().empty()) << "the session stayed open";
  const auto after = director.Dropped();
  EXPECT_EQ(after[0], before[0]);
  EXPECT_EQ(after[1] + after[2], before[1] + before[2] + 1);
}

TEST(ControlServerTest, ARegisterSealedWithAnotherKeyIsCountedUnauthenticated) {
  Director director(kWall, 0);
  const auto before = director.Dropped();
  RawSession s(director.control_port());
  auto challenge = proto::ParseChallenge(s.Next());
  ASSERT_TRUE(challenge.ok());
  proto::EnvelopeCodec wrong(OtherKey());
  s.Send(Framed(wrong.Seal("rs1", kWall, RegisterOf(kWall, *challenge))));
  EXPECT_TRUE(proto::IsAuthFailed(s.Next()));
  EXPECT_TRUE(s.Next().empty()) << "the session stayed open";
  EXPECT_EQ(director.Dropped()[1], before[1] + 1);
  EXPECT_EQ(director.State("rs1"), "") << "a wrong key registered a server";
}

TEST(ControlServerTest, AFrameLongerThanTheLimitIsRefusedFromItsLengthAlone) {
  Director director(kWall, 0);
  const auto before = director.Dropped();
  RawSession s(director.control_port());
  ASSERT_TRUE(proto::ParseChallenge(s.Next()).ok());
  const uint32_t length = static_cast<uint32_t>(proto::kMaxEnvelopeBytes) + 1;
  s.Send(Bytes{static_cast<uint8_t>(length >> 24), static_cast<uint8_t>(length >> 16),
               static_cast<uint8_t>(length >> 8), static_cast<uint8_t>(length)});
  EXPECT_TRUE(proto::IsAuthFailed(s.Next()));
  EXPECT_TRUE(s.Next().empty()) << "the session stayed open";
  EXPECT_EQ(director.Dropped()[0], before[0] + 1);
}

TEST(ControlServerTest, AHeartbeatWithTheWrongKeyIsDroppedWithoutAnswer) {
  Director director(kWall, 0);
  AgentProcess agent(kWall, director.control_port());
  ASSERT_TRUE(Eventually([&] { return director.State("rs1") == "ACTIVE"; }));
  const auto before = director.Dropped();
  proto::EnvelopeCodec wrong(OtherKey());
  proto::Message hb;
  hb.mutable_heartbeat()->set_id("rs1");
  hb.mutable_heartbeat()->set_incarnation(kWall);
  hb.mutable_heartbeat()->set_counter(1);
  hb.mutable_heartbeat()->set_flags(proto::Heartbeat::FLAG_DOWN);
  UniqueFd fd(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  to.sin_port = htons(director.heartbeat_port());
  const Bytes bytes = wrong.Seal("rs1", kWall + kHour, hb);
  ASSERT_GT(::sendto(fd.get(), bytes.data(), bytes.size(), 0, reinterpret_cast<sockaddr*>(&to),
                     sizeof(to)),
            0);
  EXPECT_TRUE(Eventually([&] { return director.Dropped()[1] == before[1] + 1; }));
  EXPECT_EQ(director.State("rs1"), "ACTIVE") << "a forged DOWN flag was believed";
  pollfd p{fd.get(), POLLIN, 0};
  EXPECT_EQ(::poll(&p, 1, 0), 0) << "the director answered a forged datagram";
}

TEST(ControlServerTest, TheAgentsHeartbeatsCarryItsInFlightRequests) {
  Director director(kWall, 0);
  AgentProcess agent(kWall, director.control_port());
  ASSERT_TRUE(Eventually([&] { return director.State("rs1") == "ACTIVE"; }));
  agent.load().Begin(7);
  EXPECT_TRUE(Eventually([&] { return director.InFlight("rs1") == 7; }))
      << "in flight on the director: " << director.InFlight("rs1");
  agent.load().End(7, 100);
  EXPECT_TRUE(Eventually([&] { return director.InFlight("rs1") == 0; }));
}

}  // namespace
}  // namespace vsc::director
