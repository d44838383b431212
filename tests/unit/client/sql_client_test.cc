#include "client/sql_client.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "proto/envelope.h"
#include "proto/frame.h"
#include "unit/client/lookup_responder.h"

namespace vsc::client {
namespace {

using namespace std::chrono_literals;

proto::ClusterKey Key(uint8_t fill) {
  std::array<uint8_t, 32> b;
  b.fill(fill);
  return proto::ClusterKey::FromBytes(b);
}

uint16_t PortOf(int fd) {
  sockaddr_in a{};
  socklen_t len = sizeof(a);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  return ntohs(a.sin_port);
}

// Answers write requests on one TCP connection: rows_changed = number of statements, seq =
// 100 + request_id; requests that arrive together are answered in reverse order (pipelining).
class FakeWritePort {
 public:
  explicit FakeWritePort(proto::ClusterKey key) : key_(std::move(key)) {
    listen_fd_ = testing::BoundSocket(SOCK_STREAM);
    ::listen(listen_fd_, 4);
    port_ = PortOf(listen_fd_);
    thread_ = std::thread([this] { Serve(); });
  }
  ~FakeWritePort() {
    thread_.join();
    ::close(listen_fd_);
  }
  uint16_t port() const { return port_; }
  int requests() const { return requests_.load(); }

 private:
  void Serve() {
    const int fd = ::accept(listen_fd_, nullptr, nullptr);
    if (fd < 0) return;
    proto::EnvelopeCodec codec(key_);
    proto::FrameDecoder decoder(proto::kMaxEnvelopeBytes);
    std::array<uint8_t, 65536> buf;
    uint64_t counter = 1;
    for (;;) {
      const ssize_t n = ::recv(fd, buf.data(), buf.size(), 0);
      if (n <= 0) break;
      decoder.Feed(std::span<const uint8_t>(buf.data(), static_cast<size_t>(n)));
      std::vector<proto::WriteRequest> got;
      for (;;) {
        auto f = decoder.Next();
        if (!f.ok() || !f->has_value()) break;
        auto opened = codec.Open(**f);
        if (!opened.ok()) continue;  // a client with another key: no answer
        got.push_back(opened->message.write_request());
      }
      std::reverse(got.begin(), got.end());
      std::vector<uint8_t> out;
      for (const auto& r : got) {
        ++requests_;
        proto::Message m;
        auto* w = m.mutable_write_response();
        w->set_request_id(r.request_id());
        w->set_ok(r.statements(0).sql() != "FAIL");
        if (!w->ok()) w->set_error("statement refused: FAIL");
        w->set_rows_changed(r.statements_size());
        w->set_seq(100 + r.request_id());
        proto::AppendFrame(out, codec.Seal("director", counter++, m));
      }
      if (!out.empty() && ::send(fd, out.data(), out.size(), MSG_NOSIGNAL) < 0) break;
    }
    ::close(fd);
  }

  proto::ClusterKey key_;
  int listen_fd_;
  uint16_t port_;
  std::atomic<int> requests_{0};
  std::thread thread_;
};

TEST(WriteClientTest, ExecutesAndPipelines) {
  const proto::ClusterKey key = Key(1);
  FakeWritePort port(key);
  {
    auto c = WriteClient::Connect("127.0.0.1", port.port(), key, 5s);
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    auto r = c->Execute({MakeStatement("INSERT INTO t VALUES(?1)", {SqlInt(1)})});
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_TRUE(r->ok());
    EXPECT_EQ(r->rows_changed(), 1);
    EXPECT_EQ(r->seq(), 101u);
    // An atomic batch is one request.
    r = c->Execute({MakeStatement("A"), MakeStatement("B"), MakeStatement("C")});
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->rows_changed(), 3);
    // A refusal is an answer, not a transport error.
    r = c->Execute({MakeStatement("FAIL")});
    ASSERT_TRUE(r.ok());
    EXPECT_FALSE(r->ok());
    EXPECT_EQ(r->error(), "statement refused: FAIL");
    // Pipelined: all sent before any answer is read; answers come back in any order.
    std::vector<uint64_t> ids;
    for (int i = 0; i < 50; ++i) {
      auto id = c->Send({MakeStatement("X")});
      ASSERT_TRUE(id.ok());
      ids.push_back(*id);
    }
    EXPECT_EQ(c->outstanding(), 50u);
    std::vector<uint64_t> answered;
    while (answered.size() < ids.size()) {
      auto a = c->Receive();
      ASSERT_TRUE(a.ok()) << a.status().ToString();
      EXPECT_EQ(a->seq(), 100 + a->request_id());
      answered.push_back(a->request_id());
    }
    std::sort(answered.begin(), answered.end());
    EXPECT_EQ(answered, ids);
    EXPECT_EQ(c->outstanding(), 0u);
    EXPECT_FALSE(c->Send({}).ok());  // no statement
  }
  EXPECT_EQ(port.requests(), 53);
}

TEST(WriteClientTest, WrongKeyTimesOutWithAClearError) {
  FakeWritePort port(Key(1));
  auto c = WriteClient::Connect("127.0.0.1", port.port(), Key(2), 200ms);
  ASSERT_TRUE(c.ok());
  auto r = c->Execute({MakeStatement("X")});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kUnavailable);
  EXPECT_NE(r.status().message().find("may or may not have been applied"), std::string::npos);
}

TEST(WriteClientTest, ConnectFailsClearly) {
  const int fd = testing::BoundSocket(SOCK_STREAM);  // bound, never listening
  const uint16_t p = PortOf(fd);
  auto c = WriteClient::Connect("127.0.0.1", p, Key(1), 1s);
  ::close(fd);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), Code::kUnavailable);
  EXPECT_NE(c.status().message().find("write port"), std::string::npos);
}

// Receives read requests on one socket and answers from ANOTHER (as a replica does in dr mode).
// Before each real answer it sends garbage, an answer sealed with a wrong key and an answer to
// another request_id; it ignores the first `drop` requests.
class FakeReadReplica {
 public:
  FakeReadReplica(proto::ClusterKey key, int drop) : key_(std::move(key)), drop_(drop) {
    in_ = testing::BoundSocket(SOCK_DGRAM);
    out_ = testing::BoundSocket(SOCK_DGRAM);
    thread_ = std::thread([this] { Serve(); });
  }
  ~FakeReadReplica() {
    stop_ = true;
    thread_.join();
    ::close(in_);
    ::close(out_);
  }
  uint16_t port() const { return PortOf(in_); }
  uint16_t reply_port() const { return PortOf(out_); }
  int received() const { return received_.load(); }

 private:
  void Serve() {
    proto::EnvelopeCodec codec(key_);
    proto::EnvelopeCodec wrong(Key(0xee));
    std::vector<uint8_t> buf(65536);
    uint64_t counter = 1;
    while (!stop_) {
      pollfd p{in_, POLLIN, 0};
      if (::poll(&p, 1, 20) <= 0) continue;
      sockaddr_in from{};
      socklen_t len = sizeof(from);
      const ssize_t n = ::recvfrom(in_, buf.data(), buf.size(), 0, reinterpret_cast<sockaddr*>(&from), &len);
      if (n <= 0) continue;
      if (received_.fetch_add(1) < drop_) continue;
      auto opened = codec.Open(std::span<const uint8_t>(buf.data(), static_cast<size_t>(n)));
      if (!opened.ok() || !opened->message.has_read_request()) continue;
      const proto::ReadRequest& req = opened->message.read_request();
      auto send = [&](const std::vector<uint8_t>& d) {
        ::sendto(out_, d.data(), d.size(), 0, reinterpret_cast<sockaddr*>(&from), sizeof(from));
      };
      send({1, 2, 3});
      proto::Message m;
      auto* r = m.mutable_read_response();
      r->set_request_id(req.request_id());
      r->set_ok(true);
      r->add_columns("min_seq");
      r->add_rows()->add_values()->set_integer(static_cast<int64_t>(req.min_seq()));
      r->add_rows()->add_values()->set_text(req.statement().sql());
      r->set_applied_seq(req.min_seq() + 1);
      r->set_replica_id("rs1");
      send(wrong.Seal("rs1", counter++, m));
      proto::Message stale = m;
      stale.mutable_read_response()->set_request_id(req.request_id() + 1000);
      send(codec.Seal("rs1", counter++, stale));
      send(codec.Seal("rs1", counter++, m));
    }
  }

  proto::ClusterKey key_;
  int drop_;
  int in_, out_;
  std::atomic<bool> stop_{false};
  std::atomic<int> received_{0};
  std::thread thread_;
};

TEST(ReadClientTest, AcceptsOnlyAuthenticatedAnswersToItsRequestFromAnyAddress) {
  const proto::ClusterKey key = Key(3);
  FakeReadReplica replica(key, /*drop=*/0);
  ASSERT_NE(replica.port(), replica.reply_port());
  auto c = ReadClient::Open("127.0.0.1", replica.port(), key, 2s, 0);
  ASSERT_TRUE(c.ok());
  for (uint64_t i = 0; i < 20; ++i) {
    auto r = c->Query(MakeStatement("SELECT " + std::to_string(i)), i);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    ASSERT_EQ(r->rows_size(), 2);
    EXPECT_EQ(r->rows(0).values(0).integer(), static_cast<int64_t>(i));
    EXPECT_EQ(r->rows(1).values(0).text(), "SELECT " + std::to_string(i));
    EXPECT_EQ(r->applied_seq(), i + 1);
  }
  // Per query: one garbage datagram and one wrongly keyed answer fail the HMAC check, one
  // answer to another request is stale.
  EXPECT_EQ(c->unauthenticated(), 40u);
  EXPECT_EQ(c->stale_answers(), 20u);
  EXPECT_EQ(c->retransmissions(), 0u);
}

TEST(ReadClientTest, RetriesOnceAfterATimeout) {
  const proto::ClusterKey key = Key(4);
  FakeReadReplica replica(key, /*drop=*/1);
  auto c = ReadClient::Open("127.0.0.1", replica.port(), key, 300ms, 1);
  ASSERT_TRUE(c.ok());
  auto r = c->Query(MakeStatement("SELECT 1"));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(c->retransmissions(), 1u);
  EXPECT_EQ(replica.received(), 2);
}

TEST(ReadClientTest, GivesUpWithAClearErrorAndRefusesOversizeRequests) {
  const proto::ClusterKey key = Key(5);
  FakeReadReplica replica(key, /*drop=*/100);
  auto c = ReadClient::Open("127.0.0.1", replica.port(), key, 100ms, 1);
  ASSERT_TRUE(c.ok());
  auto r = c->Query(MakeStatement("SELECT 1"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kUnavailable);
  EXPECT_NE(r.status().message().find("2 attempts"), std::string::npos);
  auto big = c->Query(MakeStatement("SELECT ?1", {SqlText(std::string(70000, 'x'))}));
  ASSERT_FALSE(big.ok());
  EXPECT_EQ(big.status().code(), Code::kInvalidArgument);
}

TEST(SqlDirectorTest, ParsesHostAndPorts) {
  auto d = ParseSqlDirector("10.0.0.1");
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->host, "10.0.0.1");
  EXPECT_EQ(d->write_port, 7300);
  EXPECT_EQ(d->read_port, 7301);
  d = ParseSqlDirector("h:9000");
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->write_port, 9000);
  EXPECT_EQ(d->read_port, 7301);
  d = ParseSqlDirector("h:9000,9001");
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->read_port, 9001);
  d = ParseSqlDirector("::1");
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(d->host, "::1");
  EXPECT_EQ(d->write_port, 7300);
  d = ParseSqlDirector("[::1]");
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(d->host, "[::1]");
  d = ParseSqlDirector("[fd00::7]:9000,9001");
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(d->host, "[fd00::7]");
  EXPECT_EQ(d->write_port, 9000);
  EXPECT_EQ(d->read_port, 9001);
  for (const char* bad : {"", ":1", "h:", "h:0", "h:70000", "h:1,", "h:1,x", "h:a", "[::1",
                          "[]:9000", "[::1]9000", "[::1]:", "[::1]:0"}) {
    EXPECT_FALSE(ParseSqlDirector(bad).ok()) << bad;
  }
}

TEST(SqlDirectorTest, SendersAreUnique) {
  std::vector<std::string> s;
  for (int i = 0; i < 100; ++i) s.push_back(NewClientSender());
  std::sort(s.begin(), s.end());
  EXPECT_EQ(std::unique(s.begin(), s.end()), s.end());
  for (const auto& x : s) EXPECT_LE(x.size(), proto::kMaxSenderBytes);
}

}  // namespace
}  // namespace vsc::client
