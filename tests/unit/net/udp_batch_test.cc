#include "net/udp_batch.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "net/endpoint.h"
#include "net_test_util.h"

namespace vsc::net {
namespace {

using namespace std::chrono_literals;
using asio::ip::udp;
using testing::Loopback;

udp::endpoint AnyLoopbackPort(uint16_t port = 0) {
  return udp::endpoint(asio::ip::address_v4::loopback(), port);
}

// A plain blocking client socket bound to an ephemeral loopback port.
class Client {
 public:
  Client() {
    fd_ = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_in a = Loopback(0);
    ::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof(a));
    int buf = 4 << 20;
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVBUFFORCE, &buf, sizeof(buf));
  }
  ~Client() { ::close(fd_); }
  void Send(uint16_t port, const std::string& s) {
    sockaddr_in to = Loopback(port);
    ASSERT_EQ(::sendto(fd_, s.data(), s.size(), 0, reinterpret_cast<sockaddr*>(&to), sizeof(to)),
              static_cast<ssize_t>(s.size()));
  }
  // Non-blocking receive of everything queued.
  std::vector<std::string> Poll() {
    std::vector<std::string> out;
    char buf[70000];
    for (;;) {
      ssize_t n = ::recv(fd_, buf, sizeof(buf), MSG_DONTWAIT);
      if (n < 0) break;
      out.emplace_back(buf, static_cast<size_t>(n));
    }
    return out;
  }

 private:
  int fd_ = -1;
};

// Runs ctx until `want` datagrams have been received by `client` or 10 s pass.
std::vector<std::string> RunUntilReceived(asio::io_context& ctx, Client& client, size_t want) {
  std::vector<std::string> got;
  auto end = std::chrono::steady_clock::now() + 10s;
  while (got.size() < want && std::chrono::steady_clock::now() < end) {
    if (ctx.stopped()) ctx.restart();  // a poll() with nothing to do leaves it stopped
    ctx.run_one_for(5ms);
    for (auto& s : client.Poll()) got.push_back(std::move(s));
  }
  return got;
}

void Echo(std::span<Datagram> in, SendBatch& out) {
  for (Datagram& d : in) {
    std::span<uint8_t> buf = out.Prepare(d.data.size());
    std::memcpy(buf.data(), d.data.data(), d.data.size());
    out.Commit(d.data.size(), d.peer);
  }
}

TEST(UdpBatchSocketTest, EchoesManyDatagramsInBatches) {
  asio::io_context ctx(1);
  UdpBatchOptions opts;
  opts.batch = 16;
  auto sock = UdpBatchSocket::Bind(ctx, AnyLoopbackPort(), opts);
  ASSERT_TRUE(sock.ok()) << sock.status().ToString();
  const uint16_t port = (*sock)->local_port();
  ASSERT_NE(port, 0);
  (*sock)->Start(Echo);

  Client client;
  constexpr int kWaves = 20;
  constexpr int kPerWave = 40;  // more than one batch per wakeup
  std::map<std::string, int> echoed;
  for (int w = 0; w < kWaves; ++w) {
    std::vector<std::string> sent;
    for (int i = 0; i < kPerWave; ++i) {
      // Lengths 1..~1000 so arena slots are reused with different sizes.
      std::string payload = std::to_string(w * kPerWave + i) + ":";
      payload.append(static_cast<size_t>((w * 37 + i * 101) % 1000),
                     static_cast<char>('a' + i % 26));
      client.Send(port, payload);
      sent.push_back(payload);
    }
    for (auto& s : RunUntilReceived(ctx, client, sent.size())) echoed[s]++;
    for (auto& s : sent) EXPECT_EQ(echoed[s], 1) << s.substr(0, 16);
  }
  EXPECT_EQ(echoed.size(), static_cast<size_t>(kWaves * kPerWave));
  const auto& st = (*sock)->stats();
  EXPECT_EQ(st.rx_packets, static_cast<uint64_t>(kWaves * kPerWave));
  EXPECT_EQ(st.tx_packets, static_cast<uint64_t>(kWaves * kPerWave));
  // Each wave was queued before the socket ran, so recvmmsg must have taken several at once.
  EXPECT_LT(st.rx_batches, st.rx_packets / 4);
  EXPECT_LT(st.tx_batches, st.tx_packets / 4);
  EXPECT_EQ(st.rx_truncated, 0u);
  EXPECT_EQ(st.tx_errors, 0u);
}

TEST(UdpBatchSocketTest, TruncatedDatagramsAreDroppedAndCounted) {
  asio::io_context ctx(1);
  UdpBatchOptions opts;
  opts.max_datagram = 64;
  auto sock = UdpBatchSocket::Bind(ctx, AnyLoopbackPort(), opts);
  ASSERT_TRUE(sock.ok());
  std::vector<size_t> seen;
  (*sock)->Start([&](std::span<Datagram> in, SendBatch& out) {
    for (Datagram& d : in) {
      seen.push_back(d.data.size());
      out.Prepare(1)[0] = 'k';
      out.Commit(1, d.peer);
    }
  });
  Client client;
  const uint16_t port = (*sock)->local_port();
  for (size_t len : {100, 10, 65, 64, 2000, 1}) client.Send(port, std::string(len, 'x'));
  auto replies = RunUntilReceived(ctx, client, 3);
  EXPECT_EQ(replies.size(), 3u);
  EXPECT_EQ(seen, (std::vector<size_t>{10, 64, 1}));
  EXPECT_EQ((*sock)->stats().rx_truncated, 3u);
  EXPECT_EQ((*sock)->stats().rx_packets, 3u);
}

TEST(UdpBatchSocketTest, HandlerMayReplyMoreThanItReceivedAndBadDatagramsAreSkipped) {
  asio::io_context ctx(1);
  UdpBatchOptions opts;
  opts.batch = 4;
  opts.max_datagram = 128;
  auto sock = UdpBatchSocket::Bind(ctx, AnyLoopbackPort(), opts);
  ASSERT_TRUE(sock.ok());
  (*sock)->Start([](std::span<Datagram> in, SendBatch& out) {
    for (Datagram& d : in) {
      // One datagram too large for UDP (EMSGSIZE), then three good replies: the batch grows
      // past its initial capacity and the refused datagram must not block the others.
      std::span<uint8_t> big = out.Prepare(70000);
      std::memset(big.data(), 'B', big.size());
      out.Commit(big.size(), d.peer);
      for (char tag : {'1', '2', '3'}) {
        std::span<uint8_t> b = out.Prepare(d.data.size() + 1);
        std::memcpy(b.data(), d.data.data(), d.data.size());
        b[d.data.size()] = static_cast<uint8_t>(tag);
        out.Commit(d.data.size() + 1, d.peer);
      }
    }
  });
  Client client;
  for (int i = 0; i < 8; ++i) client.Send((*sock)->local_port(), "m" + std::to_string(i));
  auto replies = RunUntilReceived(ctx, client, 24);
  std::map<std::string, int> count;
  for (auto& r : replies) count[r]++;
  EXPECT_EQ(replies.size(), 24u);
  for (int i = 0; i < 8; ++i) {
    for (char tag : {'1', '2', '3'}) EXPECT_EQ(count["m" + std::to_string(i) + tag], 1);
  }
  EXPECT_EQ((*sock)->stats().tx_errors, 8u);
  EXPECT_EQ((*sock)->stats().tx_packets, 24u);
}

TEST(UdpBatchSocketTest, DatagramsQueuedBeforeStartAreHandled) {
  asio::io_context ctx(1);
  auto sock = UdpBatchSocket::Bind(ctx, AnyLoopbackPort(), {});
  ASSERT_TRUE(sock.ok());
  Client client;
  for (int i = 0; i < 10; ++i) client.Send((*sock)->local_port(), "early" + std::to_string(i));
  // Run the reactor first so the readiness edge of the early datagrams is consumed with no one
  // waiting: Start must still find them (it receives before it waits).
  ctx.poll();
  (*sock)->Start(Echo);
  EXPECT_EQ(RunUntilReceived(ctx, client, 10).size(), 10u);

  (*sock)->Stop();
  for (int i = 0; i < 5; ++i) client.Send((*sock)->local_port(), "while-stopped");
  ctx.poll();
  EXPECT_TRUE(client.Poll().empty());
  EXPECT_EQ((*sock)->stats().rx_packets, 10u);
  (*sock)->Start(Echo);
  EXPECT_EQ(RunUntilReceived(ctx, client, 5).size(), 5u);
}

TEST(UdpBatchSocketTest, ReusePortSpreadsFlowsOverSockets) {
  asio::io_context ctx(1);
  UdpBatchOptions opts;
  opts.reuse_port = true;
  auto a = UdpBatchSocket::Bind(ctx, AnyLoopbackPort(), opts);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  const uint16_t port = (*a)->local_port();
  auto b = UdpBatchSocket::Bind(ctx, AnyLoopbackPort(port), opts);
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_EQ((*b)->local_port(), port);

  // Without SO_REUSEPORT the same port is refused, with a message naming it.
  auto c = UdpBatchSocket::Bind(ctx, AnyLoopbackPort(port), {});
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), Code::kIo);
  EXPECT_NE(c.status().message().find(std::to_string(port)), std::string::npos);

  (*a)->Start(Echo);
  (*b)->Start(Echo);
  // 64 distinct source ports: the kernel's 4-tuple hash sends all of them to one socket with
  // probability 2^-63.
  std::vector<std::unique_ptr<Client>> clients;
  for (int i = 0; i < 64; ++i) {
    clients.push_back(std::make_unique<Client>());
    clients.back()->Send(port, "flow" + std::to_string(i));
  }
  size_t replies = 0;
  auto end = std::chrono::steady_clock::now() + 10s;
  while (replies < 64 && std::chrono::steady_clock::now() < end) {
    ctx.run_one_for(5ms);
    for (auto& cl : clients) replies += cl->Poll().size();
  }
  EXPECT_EQ(replies, 64u);
  EXPECT_GT((*a)->stats().rx_packets, 0u);
  EXPECT_GT((*b)->stats().rx_packets, 0u);
  EXPECT_EQ((*a)->stats().rx_packets + (*b)->stats().rx_packets, 64u);
}

// An IPv6 socket (a VIP such as [::1]): the peer comes back as an IPv6 address and the replies
// reach it, batched and through SendTo.
TEST(UdpBatchSocketTest, Ipv6SocketEchoesToItsIpv6Peers) {
  asio::io_context ctx(1);
  auto sock = UdpBatchSocket::Bind(ctx, udp::endpoint(asio::ip::address_v6::loopback(), 0), {});
  ASSERT_TRUE(sock.ok()) << sock.status().ToString();
  std::vector<SockAddr> peers;
  (*sock)->Start([&](std::span<Datagram> in, SendBatch& out) {
    for (const Datagram& d : in) peers.push_back(d.peer);
    Echo(in, out);
  });
  udp::socket client(ctx, udp::endpoint(asio::ip::address_v6::loopback(), 0));
  client.non_blocking(true);
  const udp::endpoint server(asio::ip::address_v6::loopback(), (*sock)->local_port());
  for (int i = 0; i < 8; ++i) client.send_to(asio::buffer("v6-" + std::to_string(i)), server);
  std::vector<std::string> got;
  auto end = std::chrono::steady_clock::now() + 10s;
  while (got.size() < 8 && std::chrono::steady_clock::now() < end) {
    if (ctx.stopped()) ctx.restart();
    ctx.run_one_for(5ms);
    char buf[64];
    asio::error_code ec;
    const size_t n = client.receive(asio::buffer(buf), 0, ec);
    if (!ec) got.emplace_back(buf, n);
  }
  ASSERT_EQ(got.size(), 8u);
  EXPECT_EQ(got[0], "v6-0");
  ASSERT_FALSE(peers.empty());
  EXPECT_TRUE(peers[0].is_v6());
  EXPECT_EQ(ToUdpEndpoint(peers[0]), client.local_endpoint());
  EXPECT_EQ(ToString(peers[0]), "[::1]:" + std::to_string(client.local_endpoint().port()));
  const std::string msg = "direct";
  ASSERT_TRUE((*sock)
                  ->SendTo(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(msg.data()),
                                                    msg.size()),
                           ToSockAddr(client.local_endpoint()))
                  .ok());
  char buf[64];
  size_t n = 0;
  asio::error_code ec = asio::error::would_block;
  end = std::chrono::steady_clock::now() + 10s;
  while (ec && std::chrono::steady_clock::now() < end) {
    if (ctx.stopped()) ctx.restart();
    ctx.run_one_for(5ms);
    n = client.receive(asio::buffer(buf), 0, ec);
  }
  ASSERT_FALSE(ec) << ec.message();
  EXPECT_EQ(std::string(buf, n), "direct");
}

TEST(UdpBatchSocketTest, SendToDeliversAndCounts) {
  asio::io_context ctx(1);
  auto sock = UdpBatchSocket::Bind(ctx, AnyLoopbackPort(), {});
  ASSERT_TRUE(sock.ok());
  // A listening client: learn its port by sending to the server and reading the peer address.
  Client client;
  SockAddr peer;
  (*sock)->Start([&](std::span<Datagram> in, SendBatch&) { peer = in[0].peer; });
  client.Send((*sock)->local_port(), "hi");
  auto end = std::chrono::steady_clock::now() + 10s;
  while (peer.port() == 0 && std::chrono::steady_clock::now() < end) ctx.run_one_for(5ms);
  ASSERT_NE(peer.port(), 0);
  const std::string msg = "control-plane";
  ASSERT_TRUE((*sock)
                  ->SendTo(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(msg.data()),
                                                    msg.size()),
                           peer)
                  .ok());
  auto got = RunUntilReceived(ctx, client, 1);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0], msg);
  EXPECT_EQ((*sock)->stats().tx_packets, 1u);
}

TEST(UdpBatchSocketTest, BindFailuresAreStatuses) {
  asio::io_context ctx(1);
  UdpBatchOptions zero;
  zero.batch = 0;
  auto r = UdpBatchSocket::Bind(ctx, AnyLoopbackPort(), zero);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
  // IPv6 binds (Ipv6SocketEchoesToItsIpv6Peers); an address this host does not have fails as
  // any bind does, naming it.
  auto v6 = UdpBatchSocket::Bind(ctx, udp::endpoint(asio::ip::make_address("2001:db8::1"), 0), {});
  ASSERT_FALSE(v6.ok());
  EXPECT_EQ(v6.status().code(), Code::kIo);
  EXPECT_NE(v6.status().message().find("[2001:db8::1]:0"), std::string::npos)
      << v6.status().message();
}

TEST(SendBatchTest, PrepareCommitClear) {
  SendBatch b(2, 8);
  sockaddr_in to = Loopback(1);
  for (int i = 0; i < 10; ++i) {
    auto span = b.Prepare(100);  // larger than max_datagram and past the capacity: grows
    ASSERT_EQ(span.size(), 100u);
    span[0] = static_cast<uint8_t>(i);
    b.Commit(1 + i, to);
  }
  EXPECT_EQ(b.size(), 10u);
  b.Clear();
  EXPECT_EQ(b.size(), 0u);
}

}  // namespace
}  // namespace vsc::net
