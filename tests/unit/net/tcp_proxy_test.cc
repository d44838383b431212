#include "net/tcp_proxy.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <asio/co_spawn.hpp>
#include <asio/detached.hpp>
#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "common/random.h"
#include "net/tcp_listener.h"
#include "net_test_util.h"
#include "support/wait_until.h"

namespace vsc::net {
namespace {

using namespace std::chrono_literals;
using asio::ip::tcp;
using testing::ConnectTcp;
using testing::ContextThread;
using testing::RecvExactly;
using testing::RecvUntilClosed;
using testing::SendAllFd;

// A raw blocking listening socket on 127.0.0.1 with accept/recv deadlines of 10 s.
class RawListener {
 public:
  explicit RawListener(int backlog = 16) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a = testing::Loopback(0);
    ::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof(a));
    ::listen(fd_, backlog);
    testing::SetRecvTimeout(fd_, 10s);
    socklen_t len = sizeof(a);
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
  }
  ~RawListener() { ::close(fd_); }
  uint16_t port() const { return port_; }
  tcp::endpoint endpoint() const { return {asio::ip::address_v4::loopback(), port_}; }
  int Accept() {
    int c = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (c >= 0) testing::SetRecvTimeout(c, 10s);
    return c;
  }

 private:
  int fd_ = -1;
  uint16_t port_ = 0;
};

using ResultPromise = std::shared_ptr<std::promise<ProxyResult>>;

asio::awaitable<void> ConnectAndProxy(tcp::socket client, tcp::endpoint backend,
                                      ProxyOptions options, ResultPromise out) {
  auto conn = co_await Connect(client.get_executor(), backend, 5s);
  if (!conn.ok()) {
    out->set_value(ProxyResult{0, 0, 0, conn.status()});
    co_return;
  }
  ProxyResult r = co_await Proxy(std::move(client), std::move(*conn), options);
  out->set_value(std::move(r));
}

// Front listener on the io thread; each accepted client is proxied to `backend`.
class ProxyHarness {
 public:
  ProxyHarness(tcp::endpoint backend, ProxyOptions options) {
    port_ = io_.Run([&] {
      auto l =
          TcpListener::Listen(io_.ctx(), tcp::endpoint(asio::ip::address_v4::loopback(), 0), false);
      if (!l.ok()) return uint16_t{0};
      listener_ = std::move(*l);
      ResultPromise out = result_;
      asio::io_context& ctx = io_.ctx();
      listener_->Start([&ctx, backend, options, out](tcp::socket s) {
        asio::co_spawn(ctx, ConnectAndProxy(std::move(s), backend, options, out), asio::detached);
      });
      return listener_->local_port();
    });
  }
  ~ProxyHarness() {
    io_.Run([&] { listener_.reset(); });
  }
  uint16_t port() const { return port_; }
  // Runs f on the proxy's thread (ProxyHandle's calls belong there).
  template <class F>
  auto OnIo(F f) {
    return io_.Run(std::move(f));
  }
  // The result of the (single) proxied connection, or a failed status after 10 s.
  ProxyResult Result() {
    auto fut = result_->get_future();
    if (fut.wait_for(10s) != std::future_status::ready) {
      return ProxyResult{0, 0, 0, Internal("proxy did not finish within 10 s")};
    }
    return fut.get();
  }

 private:
  ContextThread io_;
  std::unique_ptr<TcpListener> listener_;
  ResultPromise result_ = std::make_shared<std::promise<ProxyResult>>();
  uint16_t port_ = 0;
};

TEST(TcpProxyTest, BytesFlowBothWaysAndHalfCloseIsPropagated) {
  RawListener backend;
  ProxyHarness proxy(backend.endpoint(), {});
  ASSERT_NE(proxy.port(), 0);
  int client = ConnectTcp(proxy.port());
  ASSERT_GE(client, 0);
  int server = backend.Accept();
  ASSERT_GE(server, 0);

  ASSERT_TRUE(SendAllFd(client, "hello"));
  EXPECT_EQ(RecvExactly(server, 5), "hello");
  ASSERT_TRUE(SendAllFd(server, "world!"));
  EXPECT_EQ(RecvExactly(client, 6), "world!");

  // The client ends its stream: the backend sees EOF but can still answer.
  ::shutdown(client, SHUT_WR);
  EXPECT_EQ(RecvUntilClosed(server), "");
  ASSERT_TRUE(SendAllFd(server, "after-half-close"));
  EXPECT_EQ(RecvExactly(client, 16), "after-half-close");
  ::shutdown(server, SHUT_WR);
  EXPECT_EQ(RecvUntilClosed(client), "");

  ProxyResult r = proxy.Result();
  EXPECT_TRUE(r.status.ok()) << r.status.ToString();
  EXPECT_EQ(r.bytes_a_to_b, 5u);
  EXPECT_EQ(r.bytes_b_to_a, 22u);
  EXPECT_EQ(r.bytes_spliced, 0u);  // short exchanges stay on the copy path
  ::close(client);
  ::close(server);
}

std::string RandomBytes(size_t n, uint64_t seed) {
  Random rng(seed);
  std::string s(n, '\0');
  for (size_t i = 0; i < n; i += 8) {
    uint64_t v = rng.Next();
    for (size_t j = 0; j < 8 && i + j < n; ++j) s[i + j] = static_cast<char>(v >> (8 * j));
  }
  return s;
}

class TcpProxyLargeTest : public ::testing::TestWithParam<size_t> {};

TEST_P(TcpProxyLargeTest, EightMegabytesEachWayArriveIntact) {
  RawListener backend;
  ProxyOptions options;
  options.splice_threshold = GetParam();
  ProxyHarness proxy(backend.endpoint(), options);
  int client = ConnectTcp(proxy.port());
  ASSERT_GE(client, 0);
  int server = backend.Accept();
  ASSERT_GE(server, 0);

  constexpr size_t kSize = 8 << 20;
  const std::string up = RandomBytes(kSize, 1);
  const std::string down = RandomBytes(kSize, 2);
  auto w1 = std::async(std::launch::async, [&] {
    bool ok = SendAllFd(client, up);
    ::shutdown(client, SHUT_WR);
    return ok;
  });
  auto w2 = std::async(std::launch::async, [&] {
    bool ok = SendAllFd(server, down);
    ::shutdown(server, SHUT_WR);
    return ok;
  });
  auto r1 = std::async(std::launch::async, [&] { return RecvUntilClosed(server); });
  std::optional<std::string> got_down_or = RecvUntilClosed(client);
  std::optional<std::string> got_up_or = r1.get();
  ASSERT_TRUE(got_down_or.has_value()) << "the client saw no end of stream within 10 s";
  ASSERT_TRUE(got_up_or.has_value()) << "the backend saw no end of stream within 10 s";
  const std::string& got_down = *got_down_or;
  const std::string& got_up = *got_up_or;
  EXPECT_TRUE(w1.get());
  EXPECT_TRUE(w2.get());
  EXPECT_EQ(got_up.size(), kSize);
  EXPECT_EQ(got_down.size(), kSize);
  EXPECT_TRUE(got_up == up);
  EXPECT_TRUE(got_down == down);

  ProxyResult r = proxy.Result();
  EXPECT_TRUE(r.status.ok()) << r.status.ToString();
  EXPECT_EQ(r.bytes_a_to_b, kSize);
  EXPECT_EQ(r.bytes_b_to_a, kSize);
  // A bulk stream switches to splice(2) after at most a few copied buffers.
  EXPECT_GT(r.bytes_spliced, 2 * kSize - 2 * (1 << 20));
  ::close(client);
  ::close(server);
}

INSTANTIATE_TEST_SUITE_P(SpliceThreshold, TcpProxyLargeTest, ::testing::Values(0, 16 * 1024));

TEST(TcpProxyTest, ResetOnOneSideResetsTheOther) {
  RawListener backend;
  ProxyHarness proxy(backend.endpoint(), {});
  int client = ConnectTcp(proxy.port());
  ASSERT_GE(client, 0);
  int server = backend.Accept();
  ASSERT_GE(server, 0);
  ASSERT_TRUE(SendAllFd(client, "ping"));
  EXPECT_EQ(RecvExactly(server, 4), "ping");
  linger lg{1, 0};
  ::setsockopt(server, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
  ::close(server);  // RST

  ProxyResult r = proxy.Result();
  EXPECT_EQ(r.status.code(), Code::kIo) << r.status.ToString();
  EXPECT_NE(r.status.message().find("b->a"), std::string::npos) << r.status.message();
  char c;
  ssize_t n = ::recv(client, &c, 1, 0);
  EXPECT_EQ(n, -1);
  EXPECT_EQ(errno, ECONNRESET);
  ::close(client);
}

TEST(TcpProxyTest, IdleConnectionIsClosed) {
  RawListener backend;
  ProxyOptions options;
  options.idle_timeout = 200ms;
  // The proxy closes an idle connection after between 1 and 1.25 times idle_timeout.
  const auto latest = options.idle_timeout * 5 / 4 + testing::kSchedulingSlack;
  ProxyHarness proxy(backend.endpoint(), options);
  auto start = std::chrono::steady_clock::now();
  int client = ConnectTcp(proxy.port());
  ASSERT_GE(client, 0);
  int server = backend.Accept();
  ASSERT_GE(server, 0);
  testing::SetRecvTimeout(client,
                          std::chrono::duration_cast<std::chrono::milliseconds>(latest) + 1s);
  EXPECT_EQ(RecvUntilClosed(client), "");  // EOF once the idle timeout fires
  auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_GE(elapsed, options.idle_timeout);
  EXPECT_LE(elapsed, latest);
  ProxyResult r = proxy.Result();
  EXPECT_EQ(r.status.code(), Code::kUnavailable) << r.status.ToString();
  EXPECT_NE(r.status.message().find("idle"), std::string::npos);
  ::close(client);
  ::close(server);
}

// A direction holds no buffer until its first byte, then a 512-byte landing buffer; a message
// that fills it is read on into the worker's shared scratch buffer, so a connection's own
// buffers do not grow; a bulk stream splices and gives its landing back.
TEST(TcpProxyTest, AConnectionHoldsOnlySmallLandingBuffers) {
  RawListener backend;
  ProxyOptions options;
  options.handle = std::make_shared<ProxyHandle>();
  ProxyHarness proxy(backend.endpoint(), options);
  int client = ConnectTcp(proxy.port());
  ASSERT_GE(client, 0);
  int server = backend.Accept();
  ASSERT_GE(server, 0);
  auto held = [&] {
    return proxy.OnIo(
        [&] { return options.handle->Inspect().value_or(ProxyFlowState{}).buffer_bytes; });
  };
  EXPECT_EQ(held(), 0u);  // nothing moved yet
  const std::string small(100, 'q');
  ASSERT_TRUE(SendAllFd(client, small));
  EXPECT_EQ(RecvExactly(server, small.size()), small);
  EXPECT_EQ(held(), 512u);  // only the direction that carried bytes
  ASSERT_TRUE(SendAllFd(server, small));
  EXPECT_EQ(RecvExactly(client, small.size()), small);
  EXPECT_EQ(held(), 2u * 512);
  const std::string medium(10 * 1024, 'm');  // more than the landing: no growth
  ASSERT_TRUE(SendAllFd(server, medium));
  EXPECT_EQ(RecvExactly(client, medium.size()), medium);
  EXPECT_EQ(held(), 2u * 512);
  const std::string bulk(1 << 20, 'b');  // fills 16 KiB: that direction splices, no buffer
  ASSERT_TRUE(SendAllFd(server, bulk));
  EXPECT_EQ(RecvExactly(client, bulk.size()).size(), bulk.size());
  EXPECT_EQ(held(), 512u);
  ::close(client);
  ::close(server);
  EXPECT_TRUE(proxy.Result().status.ok());
}

// A client whose receive buffer is small: the proxy keeps what it could not send yet, reads
// nothing more meanwhile, sends it all in order once the client reads, and frees it.
TEST(TcpProxyTest, BytesTheDestinationCannotTakeYetAreKeptThenSentAndFreed) {
  RawListener backend;
  ProxyOptions options;
  options.handle = std::make_shared<ProxyHandle>();
  std::atomic<uint64_t> forwarded{0};  // bytes the proxy wrote to the client
  options.live_bytes[1][0] = &forwarded;
  ProxyHarness proxy(backend.endpoint(), options);
  int client = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  const int small_buffer = 2048;  // the kernel doubles it and keeps a minimum
  ASSERT_EQ(::setsockopt(client, SOL_SOCKET, SO_RCVBUF, &small_buffer, sizeof(small_buffer)), 0);
  sockaddr_in addr = testing::Loopback(proxy.port());
  ASSERT_EQ(::connect(client, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  testing::SetRecvTimeout(client, 10s);
  int server = backend.Accept();
  ASSERT_GE(server, 0);
  auto held = [&] {
    return proxy.OnIo(
        [&] { return options.handle->Inspect().value_or(ProxyFlowState{}).buffer_bytes; });
  };
  // Messages under 16 KiB are copied, not spliced. Each is sent once the proxy forwarded the
  // last, so its reads never coalesce into a bulk-sized one; the client reads nothing until the
  // proxy's socket to it is full and the proxy has kept the rest of a message.
  std::string message(12 * 1024, 0);
  for (size_t i = 0; i < message.size(); ++i) message[i] = static_cast<char>('a' + i % 26);
  size_t sent = 0;
  while (held() <= 512u && sent < 300) {
    const uint64_t before = forwarded.load();
    ASSERT_TRUE(SendAllFd(server, message));
    ++sent;
    ASSERT_TRUE(test_support::WaitUntil(
        [&] { return forwarded.load() == before + message.size() || held() > 512u; }, 5s));
  }
  ASSERT_GT(held(), 512u) << "the proxy kept nothing of " << sent << " messages";
  for (size_t i = 0; i < sent; ++i) ASSERT_EQ(RecvExactly(client, message.size()), message) << i;
  EXPECT_TRUE(test_support::WaitUntil([&] { return held() == 512u; }, 5s)) << held();
  ::close(client);
  ::close(server);
  EXPECT_TRUE(proxy.Result().status.ok());
}

// ipvsadm --set's tcpfin: once the client has closed its half and the server goes quiet, the
// rest of the connection lives tcpfin, not tcp.
TEST(TcpProxyTest, AHalfClosedConnectionIsClosedAfterTheFinTimeout) {
  RawListener backend;
  ProxyOptions options;
  auto timeouts = std::make_shared<FlowTimeouts>(FlowTimeoutValues{30s, 200ms, 30s});
  options.timeouts = timeouts;
  const auto latest = 200ms * 5 / 4 + testing::kSchedulingSlack;
  ProxyHarness proxy(backend.endpoint(), options);
  int client = ConnectTcp(proxy.port());
  ASSERT_GE(client, 0);
  int server = backend.Accept();
  ASSERT_GE(server, 0);
  ASSERT_TRUE(SendAllFd(client, "x"));
  ASSERT_EQ(::shutdown(client, SHUT_WR), 0);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(RecvUntilClosed(server), "x");  // the FIN reached the server, which says nothing
  testing::SetRecvTimeout(client, 5s);
  EXPECT_EQ(RecvUntilClosed(client), "");  // closed by the proxy
  EXPECT_LE(std::chrono::steady_clock::now() - start, latest);
  ProxyResult r = proxy.Result();
  EXPECT_NE(r.status.message().find("half-closed"), std::string::npos) << r.status.ToString();
  ::close(client);
  ::close(server);
}

// A new value (ipvsadm --set) reaches a connection that is already open, at its next idle tick
// (a quarter of the limit it had), not only connections opened after it.
TEST(TcpProxyTest, ANewTcpTimeoutReachesAnOpenConnection) {
  RawListener backend;
  ProxyOptions options;
  auto timeouts = std::make_shared<FlowTimeouts>(FlowTimeoutValues{4s, 4s, 4s});
  options.timeouts = timeouts;
  ProxyHarness proxy(backend.endpoint(), options);
  int client = ConnectTcp(proxy.port());
  ASSERT_GE(client, 0);
  int server = backend.Accept();
  ASSERT_GE(server, 0);
  const auto start = std::chrono::steady_clock::now();
  timeouts->Set({100ms, Duration::zero(), Duration::zero()});
  EXPECT_EQ(timeouts->tcpfin(), 4s);  // zero keeps a value
  testing::SetRecvTimeout(client, 8s);
  EXPECT_EQ(RecvUntilClosed(client), "");
  // The old limit's tick (1 s) plus the new limit's quarter: well before the old 4 s.
  EXPECT_LE(std::chrono::steady_clock::now() - start, 1s + 125ms + testing::kSchedulingSlack);
  ProxyResult r = proxy.Result();
  EXPECT_NE(r.status.message().find("100 ms (idle timeout)"), std::string::npos)
      << r.status.ToString();
  ::close(client);
  ::close(server);
}

asio::awaitable<void> ConnectInto(tcp::endpoint ep, Duration timeout,
                                  std::shared_ptr<std::vector<tcp::socket>> keep,
                                  std::shared_ptr<std::promise<Status>> out) {
  auto ex = co_await asio::this_coro::executor;
  auto r = co_await Connect(ex, ep, timeout);
  if (r.ok()) {
    keep->push_back(std::move(*r));
    out->set_value(Status::Ok());
  } else {
    out->set_value(r.status());
  }
}

Status ConnectOnce(ContextThread& io, tcp::endpoint ep, Duration timeout,
                   std::shared_ptr<std::vector<tcp::socket>> keep) {
  auto out = std::make_shared<std::promise<Status>>();
  auto fut = out->get_future();
  asio::co_spawn(io.ctx(), ConnectInto(ep, timeout, keep, out), asio::detached);
  if (fut.wait_for(10s) != std::future_status::ready) return Internal("connect hung");
  return fut.get();
}

TEST(TcpProxyTest, ConnectToClosedPortFails) {
  ContextThread io;
  uint16_t closed_port;
  {
    RawListener gone;
    closed_port = gone.port();
  }
  auto keep = std::make_shared<std::vector<tcp::socket>>();
  Status s =
      ConnectOnce(io, tcp::endpoint(asio::ip::address_v4::loopback(), closed_port), 2s, keep);
  EXPECT_EQ(s.code(), Code::kIo) << s.ToString();
  EXPECT_NE(s.message().find("refused"), std::string::npos) << s.message();
  io.Run([&] { keep->clear(); });
}

TEST(TcpProxyTest, ConnectWithoutAnswerTimesOut) {
  ContextThread io;
  // A listener that never accepts, with the smallest backlog: once its accept queue is full the
  // kernel drops further SYNs, so those connects get no answer at all.
  RawListener full(/*backlog=*/0);
  auto keep = std::make_shared<std::vector<tcp::socket>>();
  Status last;
  for (int i = 0; i < 8 && last.ok(); ++i) last = ConnectOnce(io, full.endpoint(), 300ms, keep);
  EXPECT_EQ(last.code(), Code::kUnavailable) << last.ToString();
  EXPECT_NE(last.message().find("no answer within 300 ms"), std::string::npos) << last.message();
  io.Run([&] { keep->clear(); });
}

TEST(TcpProxyTest, ConnectWithoutALocalSocketIsResourceExhausted) {
  ContextThread io;
  RawListener server;
  auto keep = std::make_shared<std::vector<tcp::socket>>();
  // One connect first, so the io_context has created its reactor (epoll, eventfd, timerfd).
  ASSERT_TRUE(ConnectOnce(io, server.endpoint(), 2s, keep).ok());
  // Lower this process's descriptor limit to its lowest free descriptor number: every number
  // below is taken, so the next socket() fails with EMFILE.
  rlimit saved{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &saved), 0);
  const int lowest_free = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  ASSERT_GE(lowest_free, 0);
  ::close(lowest_free);
  rlimit low = saved;
  low.rlim_cur = static_cast<rlim_t>(lowest_free);
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &low), 0);
  Status s = ConnectOnce(io, server.endpoint(), 2s, keep);
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &saved), 0);
  EXPECT_EQ(s.code(), Code::kResourceExhausted) << s.ToString();
  EXPECT_NE(s.message().find("no local socket"), std::string::npos) << s.message();
  io.Run([&] { keep->clear(); });
}

}  // namespace
}  // namespace vsc::net
