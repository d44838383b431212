// Outbox, the one writer of a TCP session: frames arrive whole and in order (also when pushed
// while a write is in flight), CloseWhenDrained delivers what is queued and then closes, Close
// ends the writer and later pushes are ignored, and a write error closes the outbox and its socket.
// Real loopback sockets on port 0, driven on the test's thread.
#include "net/outbox.h"

#include <gtest/gtest.h>

#include <asio.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <string>

namespace vsc::net {
namespace {

using namespace std::chrono_literals;

class OutboxTest : public ::testing::Test {
 protected:
  void SetUp() override {
    asio::ip::tcp::acceptor acceptor(
        io_, asio::ip::tcp::endpoint(asio::ip::make_address_v4("127.0.0.1"), 0));
    auto socket = std::make_shared<asio::ip::tcp::socket>(io_);
    socket->connect(acceptor.local_endpoint());
    acceptor.accept(peer_);
    peer_.non_blocking(true);
    socket_ = socket;
    outbox_ = std::make_shared<Outbox>(socket);
    asio::co_spawn(io_, Outbox::Run(outbox_), [this](std::exception_ptr) { ended_ = true; });
  }

  // Runs the context until `done` holds or 5 s pass, reading whatever reached the peer.
  bool Drive(const std::function<bool()>& done) {
    const auto deadline = std::chrono::steady_clock::now() + 5s;
    while (std::chrono::steady_clock::now() < deadline) {
      io_.run_for(5ms);
      ReadPeer();
      if (done()) return true;
    }
    return done();
  }
  void ReadPeer() {
    char buf[64 * 1024];
    for (;;) {
      asio::error_code ec;
      const size_t n = peer_.read_some(asio::buffer(buf), ec);
      if (ec == asio::error::would_block) return;
      if (ec) {
        peer_closed_ = true;
        return;
      }
      received_.append(buf, n);
    }
  }
  void Push(const std::string& s) {
    outbox_->Push(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(s.data()), s.size()));
  }

  asio::io_context io_;
  asio::ip::tcp::socket peer_{io_};
  std::shared_ptr<asio::ip::tcp::socket> socket_;
  std::shared_ptr<Outbox> outbox_;
  std::string received_;
  bool peer_closed_ = false;
  bool ended_ = false;
};

TEST_F(OutboxTest, FramesArriveWholeAndInOrderAlsoWhenPushedDuringAWrite) {
  // A write far larger than the socket buffers stays in flight while more is pushed.
  std::string big(8 << 20, 'a');
  for (size_t i = 0; i < big.size(); i += 4096) big[i] = static_cast<char>('A' + (i / 4096) % 26);
  Push(big);
  io_.run_for(5ms);  // the writer takes `big`; the peer has not read, so it cannot finish
  ASSERT_EQ(outbox_->queued_bytes(), 0u) << "the writer did not take the first push";
  std::string expected = big;
  for (int i = 0; i < 100; ++i) {
    const std::string frame = "<" + std::to_string(i) + ">";
    Push(frame);
    expected += frame;
  }
  ASSERT_GT(outbox_->queued_bytes(), 0u) << "the first write was not in flight";
  ASSERT_TRUE(Drive([&] { return received_.size() >= expected.size(); }));
  EXPECT_TRUE(received_ == expected) << "bytes reordered, lost or repeated";
  EXPECT_EQ(outbox_->queued_bytes(), 0u);
  EXPECT_FALSE(peer_closed_);
  EXPECT_FALSE(outbox_->closed());
}

TEST_F(OutboxTest, CloseWhenDrainedDeliversWhatIsQueuedThenCloses) {
  Push("refused: ");
  Push("id in use");
  outbox_->CloseWhenDrained();
  ASSERT_TRUE(Drive([&] { return peer_closed_; })) << "the socket stayed open";
  EXPECT_EQ(received_, "refused: id in use");
  EXPECT_TRUE(outbox_->closed());
  EXPECT_TRUE(Drive([&] { return ended_; })) << "the writer did not end";
}

TEST_F(OutboxTest, CloseEndsTheWriterAndIgnoresLaterPushes) {
  Push("first");
  ASSERT_TRUE(Drive([&] { return received_ == "first"; }));
  outbox_->Close();
  Push("after close");
  EXPECT_TRUE(Drive([&] { return ended_; })) << "the writer did not end";
  EXPECT_EQ(outbox_->queued_bytes(), 0u);
  ReadPeer();
  EXPECT_EQ(received_, "first");
}

TEST_F(OutboxTest, AWriteErrorClosesTheOutboxAndItsSocket) {
  // The peer goes away with unread data: its kernel answers further segments with a reset.
  peer_.set_option(asio::socket_base::linger(true, 0));
  peer_.close();
  for (int i = 0; i < 100 && !outbox_->closed(); ++i) {
    Push(std::string(64 * 1024, 'x'));
    io_.run_for(5ms);
  }
  EXPECT_TRUE(outbox_->closed()) << "writes to a reset connection did not close the outbox";
  EXPECT_TRUE(Drive([&] { return ended_; })) << "the writer did not end";
  EXPECT_FALSE(socket_->is_open());
}

}  // namespace
}  // namespace vsc::net
