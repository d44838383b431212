#include "net/http_client.h"

#include <array>
#include <asio/co_spawn.hpp>
#include <asio/detached.hpp>
#include <asio/io_context.hpp>
#include <asio/ip/tcp.hpp>
#include <asio/steady_timer.hpp>
#include <asio/use_awaitable.hpp>
#include <asio/write.hpp>
#include <memory>
#include <optional>

#include "net/as_tuple.h"
#include "net/endpoint.h"
#include "net/http_parser.h"
#include "net/http_response_parser.h"

namespace vsc::net {
namespace {

using asio::ip::tcp;

struct Exchange {
  explicit Exchange(asio::io_context& ctx) : socket(ctx), deadline(ctx) {}
  tcp::socket socket;
  asio::steady_timer deadline;
  bool timed_out = false;
  std::optional<Result<HttpResponse>> result;
};

asio::awaitable<void> Run(std::shared_ptr<Exchange> x, tcp::endpoint ep, std::string request,
                          std::string what, bool head) {
  auto [cec] = co_await x->socket.async_connect(ep, kTuple);
  if (cec) {
    x->result = ErrnoStatus(what + ": connect", cec.value());
    co_return;
  }
  asio::error_code ignored;
  x->socket.set_option(tcp::no_delay(true), ignored);
  auto [wec, wn] = co_await asio::async_write(x->socket, asio::buffer(request), kTuple);
  if (wec) {
    x->result = ErrnoStatus(what + ": send", wec.value());
    co_return;
  }
  HttpResponseParser parser(64 * 1024 * 1024, head);
  std::array<char, 16 * 1024> buf;
  for (;;) {
    auto [ec, n] = co_await x->socket.async_read_some(asio::buffer(buf), kTuple);
    HttpResponseParseResult r;
    if (ec == asio::error::eof) {
      r = parser.FinishEof();
    } else if (ec) {
      x->result = ErrnoStatus(what + ": receive", ec.value());
      co_return;
    } else {
      r = parser.Feed(std::string_view(buf.data(), n));
    }
    if (auto* resp = std::get_if<HttpResponse>(&r)) {
      x->result = std::move(*resp);
      co_return;
    }
    if (auto* err = std::get_if<HttpParseError>(&r)) {
      x->result = DataLoss(what + ": " + err->message);
      co_return;
    }
  }
}

}  // namespace

std::string HttpRequestText(std::string_view method, std::string_view target, std::string_view body,
                            const std::vector<std::pair<std::string, std::string>>& headers,
                            const std::string& authority) {
  std::string req;
  req.reserve(256 + body.size());
  req.append(method).append(" ").append(target).append(" HTTP/1.1\r\n");
  bool has_host = false;
  for (const auto& [k, v] : headers) {
    if (EqualsIgnoreCase(k, "content-length") || EqualsIgnoreCase(k, "connection")) continue;
    if (EqualsIgnoreCase(k, "host")) has_host = true;
    req.append(k).append(": ").append(v).append("\r\n");
  }
  if (!has_host) req.append("Host: ").append(authority).append("\r\n");
  if (!body.empty() || method == "POST" || method == "PUT" || method == "PATCH") {
    req.append("Content-Length: ").append(std::to_string(body.size())).append("\r\n");
  }
  req.append("Connection: close\r\n\r\n").append(body);
  return req;
}

Result<HttpResponse> HttpRequestSync(
    const std::string& host, uint16_t port, std::string_view method, std::string_view target,
    std::string_view body, const std::vector<std::pair<std::string, std::string>>& headers,
    Duration timeout) {
  const std::string authority = HostPort(host, port);
  VSC_ASSIGN_OR_RETURN(tcp::endpoint ep, ParseTcpEndpoint(authority));
  const std::string what =
      "HTTP " + std::string(method) + " http://" + authority + std::string(target);

  std::string req = HttpRequestText(method, target, body, headers, authority);

  asio::io_context ctx(1);
  auto x = std::make_shared<Exchange>(ctx);
  x->deadline.expires_after(timeout);
  x->deadline.async_wait([x](const asio::error_code& ec) {
    if (ec || x->result) return;
    x->timed_out = true;
    asio::error_code ignored;
    x->socket.close(ignored);
  });
  asio::co_spawn(ctx, Run(x, ep, std::move(req), what, method == "HEAD"),
                 [x](std::exception_ptr) { x->deadline.cancel(); });
  ctx.run();
  if (x->timed_out) {
    return Unavailable(what + ": no complete response within " +
                       std::to_string(static_cast<int64_t>(ToMillis(timeout))) + " ms");
  }
  if (!x->result) return Internal(what + ": request ended without a result");
  return std::move(*x->result);
}

}  // namespace vsc::net
