// SqlTcpReader against a fake replica on 127.0.0.1 (the same io_context): its stall bound is
// per wait, not for the whole read. A result whose pages keep coming is read whole although it
// takes longer than the bound; a replica that accepts and says nothing, or stops between
// pages, fails the read within the bound.
#include "director/sql_tcp_reader.h"

#include <gtest/gtest.h>

#include <asio/experimental/as_tuple.hpp>
#include <chrono>

#include "common/clock.h"
#include "proto/frame.h"

namespace vsc::director {
namespace {

using namespace std::chrono_literals;
constexpr auto kTuple = asio::experimental::as_tuple(asio::use_awaitable);

proto::ClusterKey Key() { return proto::ClusterKey::FromHex(std::string(64, 'c')).value(); }

// Accepts one connection, reads the request, then sends `pages` pages `gap` apart (the last
// with more = false); with `stall_after` pages sent it goes silent instead.
asio::awaitable<void> FakeReplica(asio::ip::tcp::acceptor& acceptor, int pages, Duration gap,
                                  int stall_after) {
  auto socket = co_await acceptor.async_accept(asio::use_awaitable);
  std::vector<uint8_t> buf(4096);
  (void)co_await socket.async_read_some(asio::buffer(buf), kTuple);  // the request
  proto::EnvelopeCodec codec(Key());
  asio::steady_timer timer(acceptor.get_executor());
  for (int i = 0; i < pages; ++i) {
    timer.expires_after(gap);
    co_await timer.async_wait(asio::use_awaitable);
    if (i == stall_after) {
      // Silent until the reader gives up and closes.
      (void)co_await socket.async_read_some(asio::buffer(buf), kTuple);
      co_return;
    }
    proto::Message m;
    auto* page = m.mutable_read_response();
    page->set_ok(true);
    page->set_more(i + 1 < pages);
    page->set_replica_id("rs1");
    std::vector<uint8_t> frame;
    proto::AppendFrame(frame, codec.Seal("rs1", static_cast<uint64_t>(i + 1), m));
    (void)co_await asio::async_write(socket, asio::buffer(frame), kTuple);
  }
}

struct Outcome {
  TcpReadResult result;
  int pages = 0;
  Duration elapsed{};
};

Outcome ReadFrom(int pages, Duration gap, int stall_after, Duration bound) {
  asio::io_context io;
  asio::ip::tcp::acceptor acceptor(io, {asio::ip::make_address("127.0.0.1"), 0});
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(acceptor.local_endpoint().port());
  RealClock clock;
  SqlTcpReader reader(io, Key(), clock);
  Outcome out;
  asio::co_spawn(io, FakeReplica(acceptor, pages, gap, stall_after), asio::detached);
  const auto start = std::chrono::steady_clock::now();
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        out.result = co_await reader.Read(addr, proto::ReadRequest{}, bound,
                                          [&](const proto::ReadResponse&) { ++out.pages; });
        out.elapsed = std::chrono::steady_clock::now() - start;
        io.stop();
      },
      asio::detached);
  io.run_for(30s);
  return out;
}

TEST(SqlTcpReaderTest, PagesThatKeepComingAreReadWholePastTheBound) {
  // 6 pages 250 ms apart: 1.5 s in all against a bound of 1 s per wait.
  Outcome o = ReadFrom(6, 250ms, -1, 1s);
  ASSERT_TRUE(o.result.transport.ok()) << o.result.transport.ToString();
  EXPECT_TRUE(o.result.ok);
  EXPECT_EQ(o.pages, 6);
  EXPECT_EQ(o.result.replica_id, "rs1");
  EXPECT_GT(o.elapsed, 1s);  // longer than the bound: the bound is per wait
}

TEST(SqlTcpReaderTest, AReplicaThatGoesSilentFailsTheReadWithinTheBound) {
  for (int stall_after : {0, 2}) {  // before the first page; after two
    SCOPED_TRACE(stall_after);
    Outcome o = ReadFrom(6, 20ms, stall_after, 300ms);
    ASSERT_FALSE(o.result.transport.ok());
    EXPECT_NE(o.result.transport.message().find("no answer within the read timeout"),
              std::string::npos)
        << o.result.transport.ToString();
    EXPECT_EQ(o.pages, stall_after);
    EXPECT_GE(o.elapsed, 300ms);
    EXPECT_LT(o.elapsed, 5s);  // the bound and the gaps, with room for a loaded machine
  }
}

}  // namespace
}  // namespace vsc::director
