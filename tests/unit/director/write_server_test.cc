// WriteServer over a real socket on 127.0.0.1 (port 0) in front of a real Replicator
// (ReplicatorFixture) whose replicas are FakeReplicas acked by the test: what a writer sees on
// the write port (issue 10, glue only integration reached). A write is answered with its seq
// only once the commit policy is met; a statement the schema mirror refuses is answered with the
// refusal and never sequenced; frames that do not open are refused, counted and the session
// closed.
#include "director/write_server.h"

#include <gtest/gtest.h>
#include <poll.h>

#include <optional>
#include <string>
#include <vector>

#include "proto/envelope.h"
#include "proto/frame.h"
#include "proto/session_frames.h"
#include "unit/director/replicator_fixture.h"
#include "unit/net/net_test_util.h"

namespace vsc::director {
namespace {

using Bytes = std::vector<uint8_t>;
using testing::FakeReplica;

// A writer on a blocking socket: seals requests under `key` as `sender`, reads framed answers.
class Writer {
 public:
  Writer(uint16_t port, const proto::ClusterKey& key, std::string sender = "writer-1")
      : fd_(net::testing::ConnectTcp(port)), codec_(key), sender_(std::move(sender)) {
    EXPECT_GE(fd_, 0) << "cannot connect to the write port " << port;
  }
  ~Writer() {
    if (fd_ >= 0) ::close(fd_);
  }

  void SendRaw(const Bytes& bytes) {
    ASSERT_TRUE(net::testing::SendAllFd(fd_, bytes.data(), bytes.size()));
  }
  void SendFramed(const Bytes& payload) {
    Bytes framed;
    proto::AppendFrame(framed, payload);
    SendRaw(framed);
  }
  void Send(const proto::Message& m, uint64_t counter) {
    SendFramed(codec_.Seal(sender_, counter, m));
  }
  void SendWrite(uint64_t request_id, const std::string& sql) {
    proto::Message m;
    m.mutable_write_request()->set_request_id(request_id);
    m.mutable_write_request()->add_statements()->set_sql(sql);
    Send(m, ++counter_);
  }

  // The next frame's payload; nullopt when the server closed or nothing came within 10 s.
  std::optional<Bytes> NextFrame() {
    for (;;) {
      auto frame = decoder_.Next();
      if (!frame.ok()) return std::nullopt;
      if (frame->has_value()) return **frame;
      uint8_t buf[4096];
      const ssize_t n = ::recv(fd_, buf, sizeof(buf), 0);
      if (n <= 0) return std::nullopt;
      decoder_.Feed(std::span<const uint8_t>(buf, static_cast<size_t>(n)));
    }
  }
  // The next answer, opened and checked to come from the director.
  std::optional<proto::WriteResponse> NextResponse() {
    auto frame = NextFrame();
    if (!frame) {
      ADD_FAILURE() << "no answer on the write port";
      return std::nullopt;
    }
    auto opened = codec_.Open(*frame);
    if (!opened.ok() || opened->sender != "director" || !opened->message.has_write_response()) {
      ADD_FAILURE() << "the answer is not a WriteResponse sealed by the director";
      return std::nullopt;
    }
    return opened->message.write_response();
  }
  // Whether anything arrives within `wait` (an answer that must not have come yet).
  bool Readable(std::chrono::milliseconds wait) {
    pollfd p{fd_, POLLIN, 0};
    return ::poll(&p, 1, static_cast<int>(wait.count())) > 0;
  }
  // The auth-failed frame (the same for every reason), then the close.
  void ExpectAuthFailedAndClosed() {
    auto frame = NextFrame();
    ASSERT_TRUE(frame.has_value()) << "no auth-failed frame";
    EXPECT_TRUE(proto::IsAuthFailed(*frame));
    ExpectClosed();
  }
  // The server closes, nothing more comes (a stall is a failure).
  void ExpectClosed() {
    EXPECT_EQ(net::testing::RecvUntilClosed(fd_, /*reset_is_close=*/true), std::string())
        << "the write session stayed open (or sent more)";
  }

 private:
  int fd_;
  proto::EnvelopeCodec codec_;
  std::string sender_;
  uint64_t counter_ = 0;
  proto::FrameDecoder decoder_{proto::kMaxEnvelopeBytes};
};

class WriteServerTest : public testing::ReplicatorFixture {
 protected:
  void SetUp() override {
    ReplicatorFixture::SetUp();
    Open();
    auto listener =
        WriteServer::Bind(io_, asio::ip::tcp::endpoint(asio::ip::make_address_v4("127.0.0.1"), 0));
    ASSERT_TRUE(listener.ok()) << listener.status().ToString();
    server_ = std::make_unique<WriteServer>(io_, testing::TestKey(), clock_, *rep_);
    server_->Start(std::move(listener).value());
    StartLoop();
  }
  void TearDown() override {
    StopLoop([this] { server_->Stop(); });
    server_.reset();
    ReplicatorFixture::TearDown();
  }

  // A replica registered on the loop.
  FakeReplica JoinReplica(const std::string& id) {
    FakeReplica r = MakeReplica(id);
    OnLoop([&] { return Join(r).needs_catch_up(); });
    return r;
  }
  // Waits until `r` has been sent every entry up to `seq` (applied or still queued).
  void WaitSent(const FakeReplica& r, uint64_t seq) {
    ASSERT_TRUE(WaitOnLoop([&] { return r.applied + r.EntriesQueued() >= seq; }))
        << r.id << " was not sent seq " << seq;
  }
  const WriteServerCounters& Counters() const { return server_->counters(); }
  uint64_t Get(const Counter& c) {
    return OnLoop([&] { return c.Get(); });
  }

  std::unique_ptr<WriteServer> server_;
};

TEST_F(WriteServerTest, AWriteIsAnsweredWithItsSeqOnlyOnceThePolicyIsMet) {
  FakeReplica a = JoinReplica("rs1");
  FakeReplica b = JoinReplica("rs2");
  Writer w(server_->port(), testing::TestKey());
  w.SendWrite(41, "INSERT INTO t(v) VALUES ('two')");
  WaitSent(a, 1);
  WaitSent(b, 1);
  OnLoop([&] { Deliver(a); });
  // Policy all: rs2 has not acked. Had the server answered, the frame would be here by now.
  EXPECT_FALSE(w.Readable(std::chrono::milliseconds(100))) << "answered before rs2 acked";
  OnLoop([&] { Deliver(b); });
  auto r = w.NextResponse();
  ASSERT_TRUE(r.has_value());
  EXPECT_TRUE(r->ok()) << r->error();
  EXPECT_EQ(r->request_id(), 41u);
  EXPECT_EQ(r->seq(), 1u);
  EXPECT_EQ(r->rows_changed(), 1);
  EXPECT_EQ(Get(Counters().requests), 1u);
  EXPECT_EQ(Get(Counters().sessions_opened), 1u);

  // A second one on the same session gets the next seq.
  w.SendWrite(42, "INSERT INTO t(v) VALUES ('three')");
  WaitSent(a, 2);
  WaitSent(b, 2);
  OnLoop([&] {
    Deliver(a);
    Deliver(b);
  });
  r = w.NextResponse();
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->request_id(), 42u);
  EXPECT_EQ(r->seq(), 2u);
}

TEST_F(WriteServerTest, AStatementTheMirrorRefusesIsAnsweredAndNeverSequenced) {
  FakeReplica a = JoinReplica("rs1");
  Writer w(server_->port(), testing::TestKey());
  w.SendWrite(7, "INSERT INTO nope VALUES (1)");
  auto r = w.NextResponse();
  ASSERT_TRUE(r.has_value());
  EXPECT_FALSE(r->ok());
  EXPECT_EQ(r->request_id(), 7u);
  EXPECT_EQ(r->code(), kWriteRefused);
  EXPECT_EQ(r->error().rfind("statement refused: ", 0), 0u) << r->error();
  EXPECT_NE(r->error().find("no such table: nope"), std::string::npos) << r->error();
  EXPECT_EQ(r->seq(), 0u);
  // Not sequenced: the next write on the session is seq 1, and it is all rs1 was sent.
  w.SendWrite(8, "INSERT INTO t(v) VALUES ('x')");
  WaitSent(a, 1);
  OnLoop([&] { Deliver(a); });
  r = w.NextResponse();
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->request_id(), 8u);
  EXPECT_EQ(r->seq(), 1u);
  EXPECT_EQ(OnLoop([&] { return a.applied; }), 1u);
  EXPECT_EQ(Get(rep_->counters().writes_refused), 1u);
}

TEST_F(WriteServerTest, AnotherKeyIsRefusedCountedAndClosedAndNothingIsSubmitted) {
  FakeReplica a = JoinReplica("rs1");
  Writer w(server_->port(), testing::OtherKey());
  w.SendWrite(1, "INSERT INTO t(v) VALUES ('forged')");
  w.ExpectAuthFailedAndClosed();
  EXPECT_EQ(Get(Counters().dropped_unauthenticated), 1u);
  EXPECT_EQ(Get(Counters().requests), 0u);
  EXPECT_EQ(Get(rep_->counters().writes_accepted), 0u);
  EXPECT_EQ(OnLoop([&] { return rep_->last_seq(); }), 0u);
}

TEST_F(WriteServerTest, AGarbledEnvelopeIsRefusedCountedAndClosed) {
  Writer w(server_->port(), testing::TestKey());
  w.SendFramed(Bytes(100, 0x5a));  // no "VSE1" magic
  w.ExpectAuthFailedAndClosed();
  EXPECT_EQ(Get(Counters().dropped_malformed), 1u);
  EXPECT_EQ(Get(Counters().dropped_unauthenticated), 0u);
  EXPECT_EQ(Get(Counters().requests), 0u);
}

TEST_F(WriteServerTest, AReplayedRequestIsRefusedAndNotSubmittedTwice) {
  FakeReplica a = JoinReplica("rs1");
  proto::Message m;
  m.mutable_write_request()->set_request_id(5);
  m.mutable_write_request()->add_statements()->set_sql("INSERT INTO t(v) VALUES ('once')");
  {
    Writer w(server_->port(), testing::TestKey());
    w.Send(m, 100);
    WaitSent(a, 1);
    OnLoop([&] { Deliver(a); });
    ASSERT_TRUE(w.NextResponse().has_value());
  }
  // The same sealed request on a new connection: its counter was seen.
  Writer again(server_->port(), testing::TestKey());
  again.Send(m, 100);
  again.ExpectAuthFailedAndClosed();
  EXPECT_EQ(Get(Counters().dropped_replayed), 1u);
  EXPECT_EQ(Get(rep_->counters().writes_accepted), 1u);
}

TEST_F(WriteServerTest, AnEnvelopeThatIsNoWriteRequestClosesTheSessionUnanswered) {
  Writer w(server_->port(), testing::TestKey());
  proto::Message hb;
  hb.mutable_heartbeat()->set_id("rs1");
  w.Send(hb, 1);
  w.ExpectClosed();
  EXPECT_EQ(Get(Counters().dropped_malformed), 1u);
  EXPECT_EQ(Get(Counters().requests), 0u);
}

TEST_F(WriteServerTest, AFrameLongerThanTheLimitIsRefusedFromItsLengthAlone) {
  Writer w(server_->port(), testing::TestKey());
  const uint32_t length = static_cast<uint32_t>(proto::kMaxEnvelopeBytes) + 1;
  w.SendRaw(Bytes{static_cast<uint8_t>(length >> 24), static_cast<uint8_t>(length >> 16),
                  static_cast<uint8_t>(length >> 8), static_cast<uint8_t>(length)});
  w.ExpectClosed();
  EXPECT_EQ(Get(Counters().dropped_oversize), 1u);
}

}  // namespace
}  // namespace vsc::director
