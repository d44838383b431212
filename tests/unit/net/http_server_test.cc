#include "net/http_server.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "net/http_client.h"
#include "net/http_response_parser.h"
#include "net_test_util.h"

namespace vsc::net {
namespace {

using namespace std::chrono_literals;
using asio::ip::tcp;
using testing::ConnectTcp;
using testing::ContextThread;
using testing::RecvUntilClosed;
using testing::SendAllFd;

// A server on its own io thread whose handler reports what it saw as JSON.
class ServerHarness {
 public:
  explicit ServerHarness(HttpServerOptions options = {}) {
    port_ = io_.Run([&] {
      server_ = std::make_unique<HttpServer>(
          io_.ctx(), tcp::endpoint(asio::ip::address_v4::loopback(), 0),
          [this](const HttpRequest& r) { return Handle(r); }, false, options);
      Status s = server_->Start();
      return s.ok() ? server_->local_port() : uint16_t{0};
    });
  }
  ~ServerHarness() {
    io_.Run([&] { server_.reset(); });
  }

  HttpResponse Handle(const HttpRequest& r) {
    ++calls;
    if (r.path == "/throw") throw std::runtime_error("boom");
    nlohmann::json j = {{"method", r.method}, {"path", r.path},  {"query", r.query},
                        {"body", r.body},     {"calls", calls.load()}};
    if (auto v = r.Header("x-test")) j["x_test"] = std::string(*v);
    HttpResponse resp;
    resp.status = r.path == "/missing" ? 404 : 200;
    resp.body = j.dump();
    return resp;
  }

  uint16_t port() const { return port_; }
  ContextThread& io() { return io_; }
  HttpServer& server() { return *server_; }
  std::atomic<int> calls{0};

 private:
  ContextThread io_;
  std::unique_ptr<HttpServer> server_;
  uint16_t port_ = 0;
};

// Reads exactly `n` responses from a raw connection.
std::vector<HttpResponse> ReadResponses(int fd, size_t n) {
  std::vector<HttpResponse> out;
  auto parser = std::make_unique<HttpResponseParser>();
  char buf[4096];
  std::string pending;
  while (out.size() < n) {
    ssize_t r = ::recv(fd, buf, sizeof(buf), 0);
    if (r <= 0) break;
    pending.append(buf, static_cast<size_t>(r));
    // Responses may arrive back to back in one read: feed byte-wise across parser instances.
    size_t used = 0;
    while (used < pending.size() && out.size() < n) {
      auto res = parser->Feed(std::string_view(pending).substr(used, 1));
      ++used;
      if (auto* resp = std::get_if<HttpResponse>(&res)) {
        out.push_back(std::move(*resp));
        parser = std::make_unique<HttpResponseParser>();
      } else if (std::holds_alternative<HttpParseError>(res)) {
        return out;
      }
    }
    pending.erase(0, used);
  }
  return out;
}

TEST(HttpServerTest, RoundTripWithSyncClient) {
  ServerHarness h;
  ASSERT_NE(h.port(), 0);
  auto r = HttpRequestSync("127.0.0.1", h.port(), "GET", "/v1/resources/1,2?x=y", "",
                           {{"X-Test", "abc"}}, 5s);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->content_type, "application/json");
  auto j = nlohmann::json::parse(r->body);
  EXPECT_EQ(j["method"], "GET");
  EXPECT_EQ(j["path"], "/v1/resources/1,2");
  EXPECT_EQ(j["query"], "x=y");
  EXPECT_EQ(j["x_test"], "abc");

  const std::string body(200000, 'p');
  auto p = HttpRequestSync("localhost", h.port(), "POST", "/v1/servers", body, {}, 5s);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(nlohmann::json::parse(p->body)["body"], body);

  auto m = HttpRequestSync("127.0.0.1", h.port(), "GET", "/missing", "", {}, 5s);
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->status, 404);

  auto head = HttpRequestSync("127.0.0.1", h.port(), "HEAD", "/", "", {}, 5s);
  ASSERT_TRUE(head.ok()) << head.status().ToString();
  EXPECT_TRUE(head->body.empty());
}

TEST(HttpServerTest, KeepAliveAndPipelining) {
  ServerHarness h;
  int fd = ConnectTcp(h.port());
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(SendAllFd(fd, "GET /one HTTP/1.1\r\nHost: t\r\n\r\n"));
  auto first = ReadResponses(fd, 1);
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(nlohmann::json::parse(first[0].body)["path"], "/one");
  EXPECT_EQ(first[0].Header("connection"), "keep-alive");

  // Same connection, three pipelined requests in one write: answered in order.
  ASSERT_TRUE(SendAllFd(fd,
                        "GET /two HTTP/1.1\r\n\r\n"
                        "POST /three HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc"
                        "GET /four HTTP/1.1\r\nConnection: close\r\n\r\n"));
  auto rest = ReadResponses(fd, 3);
  ASSERT_EQ(rest.size(), 3u);
  EXPECT_EQ(nlohmann::json::parse(rest[0].body)["path"], "/two");
  EXPECT_EQ(nlohmann::json::parse(rest[1].body)["body"], "abc");
  EXPECT_EQ(nlohmann::json::parse(rest[2].body)["path"], "/four");
  EXPECT_EQ(rest[2].Header("connection"), "close");
  EXPECT_EQ(RecvUntilClosed(fd), "");  // closed after "Connection: close"
  EXPECT_EQ(h.calls.load(), 4);
  ::close(fd);
}

struct BadRequest {
  std::string input;
  int status;
};

TEST(HttpServerTest, BadRequestsGetAnErrorAndTheConnectionCloses) {
  ServerHarness h;
  std::vector<BadRequest> cases = {
      {"\x16\x03\x01 garbage garbage\r\n\r\n", 400},
      {"GET / HTTP/1.1\r\nContent-Length: 99999999\r\n\r\n" + std::string(100000, 'x'), 413},
      {"GET /" + std::string(9000, 'a') + " HTTP/1.1\r\n\r\n", 414},
      {"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 411},
  };
  std::string many = "GET / HTTP/1.1\r\n";
  for (int i = 0; i < 150; ++i) many += "X-" + std::to_string(i) + ": v\r\n";
  cases.push_back({many + "\r\n", 431});
  for (const BadRequest& c : cases) {
    int fd = ConnectTcp(h.port());
    ASSERT_GE(fd, 0);
    SendAllFd(fd, c.input);
    auto resp = ReadResponses(fd, 1);
    ASSERT_EQ(resp.size(), 1u) << c.status;
    EXPECT_EQ(resp[0].status, c.status);
    EXPECT_EQ(resp[0].Header("connection"), "close");
    auto j = nlohmann::json::parse(resp[0].body);
    EXPECT_TRUE(j["error"].is_string());
    ::shutdown(fd, SHUT_WR);
    EXPECT_EQ(RecvUntilClosed(fd), "");
    ::close(fd);
  }
  EXPECT_EQ(h.calls.load(), 0);
  EXPECT_TRUE(testing::WaitOn(h.io(), [&] { return h.server().session_count() == 0; }));
}

TEST(HttpServerTest, HandlerExceptionBecomes500) {
  ServerHarness h;
  auto r = HttpRequestSync("127.0.0.1", h.port(), "GET", "/throw", "", {}, 5s);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, 500);
  EXPECT_NE(r->body.find("boom"), std::string::npos);
}

TEST(HttpServerTest, StopClosesIdleSessionsAndStopsCallingTheHandler) {
  ServerHarness h;
  std::vector<int> fds;
  for (int i = 0; i < 3; ++i) {
    int fd = ConnectTcp(h.port());
    ASSERT_GE(fd, 0);
    ASSERT_TRUE(SendAllFd(fd, "GET / HTTP/1.1\r\n\r\n"));
    ASSERT_EQ(ReadResponses(fd, 1).size(), 1u);
    fds.push_back(fd);
  }
  EXPECT_EQ(h.io().Run([&] { return h.server().session_count(); }), 3u);
  h.io().Run([&] { h.server().Stop(); });
  EXPECT_TRUE(testing::WaitOn(h.io(), [&] { return h.server().session_count() == 0; }));
  for (int fd : fds) {
    EXPECT_EQ(RecvUntilClosed(fd), "");
    ::close(fd);
  }
  EXPECT_EQ(ConnectTcp(h.port()), -1);  // the listener is closed
  EXPECT_EQ(h.calls.load(), 3);
}

TEST(HttpServerTest, IdleConnectionsAreClosed) {
  HttpServerOptions options;
  options.idle_timeout = 100ms;
  const auto latest = options.idle_timeout + testing::kSchedulingSlack;
  ServerHarness h(options);
  const auto start = std::chrono::steady_clock::now();
  int fd = ConnectTcp(h.port());
  ASSERT_GE(fd, 0);
  // Give up (and fail) soon after the latest acceptable close, not after the default 10 s.
  testing::SetRecvTimeout(fd, std::chrono::duration_cast<std::chrono::milliseconds>(latest) + 1s);
  EXPECT_EQ(RecvUntilClosed(fd), "") << "the server did not close an idle connection";
  const auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_GE(elapsed, options.idle_timeout);
  EXPECT_LE(elapsed, latest);
  ::close(fd);
  EXPECT_TRUE(testing::WaitOn(h.io(), [&] { return h.server().session_count() == 0; }));
}

TEST(HttpServerTest, StartFailsOnABusyPort) {
  ServerHarness h;
  ContextThread io;
  Status s = io.Run([&] {
    HttpServer second(io.ctx(), tcp::endpoint(asio::ip::address_v4::loopback(), h.port()),
                      [](const HttpRequest&) { return HttpResponse{}; });
    return second.Start();
  });
  EXPECT_EQ(s.code(), Code::kIo);
  EXPECT_NE(s.message().find(std::to_string(h.port())), std::string::npos) << s.message();
}

TEST(HttpClientTest, ErrorsAreStatuses) {
  // Nothing listens: refused.
  uint16_t closed;
  {
    ServerHarness gone;
    closed = gone.port();
  }
  auto refused = HttpRequestSync("127.0.0.1", closed, "GET", "/", "", {}, 2s);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), Code::kIo);

  // A listener that never answers: the whole exchange is bounded by the timeout.
  int lfd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a = testing::Loopback(0);
  ASSERT_EQ(::bind(lfd, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
  ASSERT_EQ(::listen(lfd, 4), 0);
  socklen_t len = sizeof(a);
  ::getsockname(lfd, reinterpret_cast<sockaddr*>(&a), &len);
  auto start = std::chrono::steady_clock::now();
  auto silent = HttpRequestSync("127.0.0.1", ntohs(a.sin_port), "GET", "/", "", {}, 200ms);
  const auto waited = std::chrono::steady_clock::now() - start;
  EXPECT_GE(waited, 200ms);
  EXPECT_LE(waited, 200ms + testing::kSchedulingSlack);
  ASSERT_FALSE(silent.ok());
  EXPECT_EQ(silent.status().code(), Code::kUnavailable) << silent.status().ToString();
  ::close(lfd);

  auto bad_host = HttpRequestSync("no-such-host.invalid", 80, "GET", "/", "", {}, 1s);
  ASSERT_FALSE(bad_host.ok());
  EXPECT_EQ(bad_host.status().code(), Code::kInvalidArgument);
}

}  // namespace
}  // namespace vsc::net
