#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <vector>

#include "client/tcp_lookup_client.h"
#include "client/udp_lookup_client.h"
#include "common/random.h"
#include "unit/client/lookup_responder.h"

namespace vsc::client {
namespace {

using namespace std::chrono_literals;
using testing::ExpectedAnswer;

std::vector<uint64_t> RandomIds(Random& rng) {
  std::vector<uint64_t> ids(1 + rng.Uniform(10));
  for (auto& id : ids) id = 1 + rng.Uniform(2'000'000);
  return ids;
}

template <typename Client>
void ExpectRandomLookupsAnswered(Client& client, int n) {
  Random rng(11);
  for (int i = 0; i < n; ++i) {
    const std::vector<uint64_t> ids = RandomIds(rng);
    auto answers = client.Lookup(ids);
    ASSERT_TRUE(answers.ok()) << answers.status().ToString();
    ASSERT_EQ(answers->size(), ids.size());
    for (size_t k = 0; k < ids.size(); ++k) EXPECT_EQ(answers->at(k), ExpectedAnswer(ids[k]));
  }
}

TEST(UdpLookupClientTest, AcceptsAnswersFromAnotherAddressLikeDrMode) {
  testing::UdpLookupResponder responder;
  ASSERT_NE(responder.reply_port(), responder.port());
  auto client = UdpLookupClient::Connect("127.0.0.1", responder.port(), 1s);
  ASSERT_TRUE(client.ok()) << client.status().ToString();
  ExpectRandomLookupsAnswered(*client, 300);
  EXPECT_EQ(responder.answered(), 300u);
  EXPECT_EQ(client->retransmissions(), 0u);
}

TEST(UdpLookupClientTest, IgnoresStaleAndGarbageAnswers) {
  testing::UdpLookupResponder responder({.drop_first = 0, .stale_before = true});
  auto client = UdpLookupClient::Connect("127.0.0.1", responder.port(), 1s);
  ASSERT_TRUE(client.ok());
  ExpectRandomLookupsAnswered(*client, 50);
  EXPECT_EQ(client->stale_answers(), 100u);  // one wrong id and one garbage datagram each
}

TEST(UdpLookupClientTest, RetriesOnceWhenTheFirstRequestIsDropped) {
  testing::UdpLookupResponder responder({.drop_first = 1, .stale_before = false});
  auto client = UdpLookupClient::Connect("127.0.0.1", responder.port(), 50ms, 1);
  ASSERT_TRUE(client.ok());
  const uint64_t ids[] = {5, 8};
  auto answers = client->Lookup(ids);
  ASSERT_TRUE(answers.ok()) << answers.status().ToString();
  EXPECT_EQ(answers->at(0), ExpectedAnswer(5));
  EXPECT_EQ(answers->at(1), ExpectedAnswer(8));
  EXPECT_EQ(client->retransmissions(), 1u);
  EXPECT_EQ(responder.requests(), 2u);
}

TEST(UdpLookupClientTest, WithoutRetriesADroppedRequestIsUnavailable) {
  testing::UdpLookupResponder responder({.drop_first = 1, .stale_before = false});
  auto client = UdpLookupClient::Connect("127.0.0.1", responder.port(), 30ms, 0);
  ASSERT_TRUE(client.ok());
  const uint64_t ids[] = {5};
  auto lost = client->Lookup(ids);
  ASSERT_FALSE(lost.ok());
  EXPECT_EQ(lost.status().code(), Code::kUnavailable);
  EXPECT_NE(lost.status().message().find("after 1 attempts"), std::string::npos);
  // The next request gets through.
  EXPECT_TRUE(client->Lookup(ids).ok());
}

TEST(UdpLookupClientTest, RefusesBadIdCountsWithoutSending) {
  testing::UdpLookupResponder responder;
  auto client = UdpLookupClient::Connect("127.0.0.1", responder.port(), 1s);
  ASSERT_TRUE(client.ok());
  std::vector<uint64_t> none, eleven(11, 1);
  EXPECT_EQ(client->Lookup(none).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(client->Lookup(eleven).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(responder.requests(), 0u);
}

TEST(UdpLookupClientTest, ConnectRefusesBadArguments) {
  EXPECT_FALSE(UdpLookupClient::Connect("127.0.0.1", 9, 0ms).ok());
  EXPECT_FALSE(UdpLookupClient::Connect("127.0.0.1", 9, 1s, -1).ok());
  EXPECT_FALSE(UdpLookupClient::Connect("no-such-host.invalid", 9).ok());
}

TEST(TcpLookupClientTest, AnswersManyLookupsOnOneConnection) {
  testing::TcpLookupResponder responder;
  auto client = TcpLookupClient::Connect("127.0.0.1", responder.port(), 1s);
  ASSERT_TRUE(client.ok()) << client.status().ToString();
  ExpectRandomLookupsAnswered(*client, 300);
  EXPECT_EQ(responder.accepted(), 1u);
  EXPECT_EQ(client->reconnects(), 0u);
}

TEST(TcpLookupClientTest, ReconnectsWhenTheServerClosedTheConnection) {
  testing::TcpLookupResponder responder({.close_after_first_answer = true});
  auto client = TcpLookupClient::Connect("127.0.0.1", responder.port(), 1s);
  ASSERT_TRUE(client.ok());
  ExpectRandomLookupsAnswered(*client, 5);
  EXPECT_GE(client->reconnects(), 4u);
  EXPECT_EQ(responder.answered(), 5u);
}

TEST(TcpLookupClientTest, ConnectionRefusedIsUnavailable) {
  // A bound but not listening socket holds a port nobody accepts on.
  const int fd = testing::BoundSocket(SOCK_STREAM);
  auto client = TcpLookupClient::Connect("127.0.0.1", testing::LocalPort(fd), 1s);
  ::close(fd);
  ASSERT_FALSE(client.ok());
  EXPECT_EQ(client.status().code(), Code::kUnavailable);
}

TEST(TcpLookupClientTest, SilentServerTimesOut) {
  const int fd = testing::BoundSocket(SOCK_STREAM);
  ASSERT_EQ(::listen(fd, 4), 0);  // the kernel completes the handshake; nobody ever answers
  auto client = TcpLookupClient::Connect("127.0.0.1", testing::LocalPort(fd), 30ms);
  ASSERT_TRUE(client.ok());
  const uint64_t ids[] = {1};
  auto r = client->Lookup(ids);
  ::close(fd);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kUnavailable);
  EXPECT_NE(r.status().message().find("no answer"), std::string::npos);
}

}  // namespace
}  // namespace vsc::client
