// PeerLink against a fake ring node on loopback (the test thread, blocking sockets): the
// handshake, answers matched to their requests by id, and the link's one timeout, which fails
// the link when its oldest unanswered request is older than the timeout.
#include "relay/peer_link.h"

#include <gtest/gtest.h>

#include <asio.hpp>
#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <vector>

#include "common/clock.h"
#include "unit/net/net_test_util.h"
#include "unit/relay/peer_frames.h"

namespace vsc::relay {
namespace {

using namespace std::chrono_literals;
using net::testing::ContextThread;
using net::testing::WaitOn;

using testing::Copy;
proto::ClusterKey Key() { return testing::Key(7); }

// The acceptor's side of peer_auth.h, one connection, driven step by step by the test.
class FakePeer {
 public:
  FakePeer() : acceptor_(io_, {asio::ip::address_v4::loopback(), 0}), socket_(io_) {}
  asio::ip::tcp::endpoint endpoint() const { return acceptor_.local_endpoint(); }

  // Accepts the link's connection and answers its hello with a challenge.
  void Accept() {
    acceptor_.accept(socket_);
    Frame hello = Read();
    ASSERT_EQ(hello.type, Type::kPeerHello);
    auto theirs = NonceOf(hello);
    ASSERT_TRUE(theirs.ok());
    const proto::Nonce ours = proto::NewNonce();
    sealer_.emplace(Key(), *theirs);
    opener_.emplace(Key(), ours);
    Frame challenge;
    challenge.type = Type::kPeerChallenge;
    challenge.payload.assign(ours.begin(), ours.end());
    Write(std::move(challenge));
  }
  // The next request, its tag checked and stripped.
  Frame ReadRequest() {
    Frame f = Read();
    EXPECT_TRUE(opener_->Open(f).ok());
    return f;
  }
  void AckCopy(const Frame& copy) {
    Frame ack;
    ack.type = Type::kCopyAck;
    ack.request_id = copy.request_id;
    ack.key = copy.key;
    ack.seq = copy.seq;
    Write(std::move(ack));
  }

 private:
  Frame Read() {
    for (;;) {
      auto next = decoder_.Next();
      if (!next.ok()) ADD_FAILURE() << next.status().message();
      if (!next.ok()) return {};
      if (next->has_value()) return std::move(**next);
      uint8_t buf[4096];
      asio::error_code ec;
      const size_t n = socket_.read_some(asio::buffer(buf), ec);
      if (ec) ADD_FAILURE() << "fake peer: " << ec.message();
      if (ec) return {};
      decoder_.Feed(std::span<const uint8_t>(buf, n));
    }
  }
  void Write(Frame f) {
    sealer_->Seal(f);
    asio::error_code ec;  // a link that failed already has closed its end
    asio::write(socket_, asio::buffer(EncodeFrame(f)), ec);
  }

  asio::io_context io_;
  asio::ip::tcp::acceptor acceptor_;
  asio::ip::tcp::socket socket_;
  FrameDecoder decoder_;
  std::optional<PeerSealer> sealer_;
  std::optional<PeerOpener> opener_;
};

// What a request's callback got, read on the link's thread.
struct Outcome {
  bool done = false;
  PeerLink::Answer answer = Unavailable("not answered");
};
PeerLink::Done Record(std::shared_ptr<Outcome> o) {
  return [o](PeerLink::Answer a) {
    EXPECT_FALSE(o->done) << "a request answered twice";
    o->done = true;
    o->answer = std::move(a);
  };
}

class PeerLinkTest : public ::testing::Test {
 protected:
  std::shared_ptr<PeerLink> MakeLink(std::chrono::milliseconds timeout, const Clock& clock) {
    return t_.Run([&] {
      return std::make_shared<PeerLink>(t_.ctx(), key_, "rs-test", peer_.endpoint(), timeout,
                                        clock);
    });
  }
  std::shared_ptr<Outcome> Start(const std::shared_ptr<PeerLink>& link, Frame f) {
    auto o = std::make_shared<Outcome>();
    t_.Run([&] { link->Start(std::move(f), Record(o)); });
    return o;
  }
  bool Done(const std::shared_ptr<Outcome>& o) {
    return t_.Run([&] { return o->done; });
  }
  ~PeerLinkTest() override {
    for (auto& l : links_) t_.Run([&] { l->Close(); });
  }

  proto::ClusterKey key_ = Key();
  RealClock real_;
  FakePeer peer_;
  ContextThread t_;
  std::vector<std::shared_ptr<PeerLink>> links_;
};

TEST_F(PeerLinkTest, AnswersReachTheirOwnRequestsInAnyOrder) {
  auto link = MakeLink(5000ms, real_);
  links_.push_back(link);
  auto first = Start(link, Copy(1));
  auto second = Start(link, Copy(2));
  peer_.Accept();
  Frame a = peer_.ReadRequest(), b = peer_.ReadRequest();
  ASSERT_EQ(a.seq, 1u);
  ASSERT_EQ(b.seq, 2u);
  EXPECT_NE(a.request_id, b.request_id);
  peer_.AckCopy(b);  // the later request is answered first
  ASSERT_TRUE(WaitOn(t_, [&] { return second->done; }));
  EXPECT_FALSE(Done(first));
  peer_.AckCopy(a);
  ASSERT_TRUE(WaitOn(t_, [&] { return first->done; }));
  t_.Run([&] {
    ASSERT_TRUE(first->answer.ok()) << first->answer.status().message();
    ASSERT_TRUE(second->answer.ok()) << second->answer.status().message();
    EXPECT_EQ(first->answer->back().type, Type::kCopyAck);
    EXPECT_EQ(first->answer->back().seq, 1u);
    EXPECT_EQ(second->answer->back().seq, 2u);
  });
}

TEST_F(PeerLinkTest, AnUnansweredRequestFailsTheLinkAndEveryRequestOnIt) {
  auto link = MakeLink(300ms, real_);
  links_.push_back(link);
  auto first = Start(link, Copy(1));
  auto second = Start(link, Copy(2));
  peer_.Accept();  // and never answers
  ASSERT_TRUE(WaitOn(
      t_, [&] { return first->done && second->done; }, 300ms + net::testing::kSchedulingSlack * 5));
  t_.Run([&] {
    for (const auto& o : {first, second}) {
      ASSERT_FALSE(o->answer.ok());
      EXPECT_NE(o->answer.status().message().find("within 300 ms"), std::string::npos)
          << o->answer.status().message();
    }
    EXPECT_TRUE(link->broken());
    // A request on a broken link is answered at once, before Start returns.
    auto late = std::make_shared<Outcome>();
    link->Start(Copy(3), Record(late));
    EXPECT_TRUE(late->done);
    EXPECT_FALSE(late->answer.ok());
  });
}

TEST_F(PeerLinkTest, TheTimeoutCountsFromTheOldestUnansweredRequest) {
  // A manual clock: the link's timer wakes it in real time, the deadlines are read from it.
  ManualClock clock;
  auto link = MakeLink(50ms, clock);
  links_.push_back(link);
  auto first = Start(link, Copy(1));
  clock.Advance(40ms);
  auto second = Start(link, Copy(2));  // its deadline is 40 ms after the first's
  peer_.Accept();
  Frame a = peer_.ReadRequest();
  peer_.ReadRequest();
  peer_.AckCopy(a);
  ASSERT_TRUE(WaitOn(t_, [&] { return first->done; }));
  // The timer fires every 50 ms of real time meanwhile; the second request's deadline has not
  // passed on the link's clock, so the link holds.
  EXPECT_FALSE(WaitOn(
      t_, [&] { return second->done; }, 300ms));
  EXPECT_FALSE(t_.Run([&] { return link->broken(); }));
  clock.Advance(60ms);  // now past the second request's deadline
  ASSERT_TRUE(WaitOn(
      t_, [&] { return second->done; }, 50ms + net::testing::kSchedulingSlack * 5));
  t_.Run([&] {
    EXPECT_TRUE(first->answer.ok());
    ASSERT_FALSE(second->answer.ok());
    EXPECT_NE(second->answer.status().message().find("within 50 ms"), std::string::npos);
  });
}

}  // namespace
}  // namespace vsc::relay
