// HTTP_GET: GET the path over HTTP/1.0 (the server closes after the body), bounded in time and
// size, then judge status and digest as keepalived's check_http.c does.
#include <fmt/format.h>
#include <openssl/evp.h>

#include <array>
#include <asio/use_awaitable.hpp>
#include <asio/write.hpp>
#include <charconv>

#include "director/probe.h"
#include "director/probe_deadline.h"
#include "net/as_tuple.h"

namespace vsc::director {

using net::kTuple;
namespace {

std::string Md5Hex(std::string_view data) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> md{};
  unsigned int len = 0;
  EVP_Digest(data.data(), data.size(), md.data(), &len, EVP_md5(), nullptr);
  std::string hex;
  for (unsigned int i = 0; i < len; ++i) hex += fmt::format("{:02x}", md[i]);
  return hex;
}

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// "HTTP/1.1 503 Service Unavailable" -> 503, or 0 if the line is not a status line.
int StatusCode(std::string_view response) {
  if (response.substr(0, 5) != "HTTP/") return 0;
  const size_t space = response.find(' ');
  if (space == std::string_view::npos || response.size() < space + 4) return 0;
  int code = 0;
  const char* begin = response.data() + space + 1;
  auto [end, ec] = std::from_chars(begin, begin + 3, code);
  return ec == std::errc() && end == begin + 3 ? code : 0;
}

// Reads until the server closes, at most kMaxHttpResponse bytes. Returns "" or the error.
asio::awaitable<std::string> ReadAll(asio::ip::tcp::socket& socket, std::string& response,
                                     const ProbeDeadline& deadline, Duration timeout) {
  std::array<char, 16384> buf;
  for (;;) {
    auto [ec, n] = co_await socket.async_read_some(asio::buffer(buf), kTuple);
    if (deadline.expired()) co_return TimeoutText(timeout) + " (reading the response)";
    response.append(buf.data(), n);
    if (response.size() > kMaxHttpResponse) {
      co_return fmt::format("response larger than {} bytes; HTTP_GET reads at most that much",
                            kMaxHttpResponse);
    }
    if (ec == asio::error::eof) co_return std::string();
    if (ec) co_return ec.message();
  }
}

}  // namespace

membership::ProbeResult JudgeHttpResponse(std::string_view response,
                                          const vservice::CheckConfig& check) {
  if (response.empty()) return {false, "no data received", {}};
  const int status = StatusCode(response);
  if (status == 0) return {false, "response does not start with an HTTP status line", {}};
  if (status < check.status_min || status > check.status_max) {
    return {false,
            fmt::format("HTTP status {} not in {}-{}", status, check.status_min, check.status_max),
            {}};
  }
  if (check.digest.empty()) return {true, fmt::format("HTTP status {}", status), {}};
  const size_t end = response.find("\r\n\r\n");
  if (end == std::string_view::npos) return {false, "response has no end of headers", {}};
  const std::string digest = Md5Hex(response.substr(end + 4));
  if (digest != Lower(check.digest)) {
    return {
        false, fmt::format("MD5 digest {} of the body is not {}", digest, Lower(check.digest)), {}};
  }
  return {true, fmt::format("HTTP status {}, digest matches", status), {}};
}

asio::awaitable<membership::ProbeResult> HttpProbe(vservice::CheckConfig check,
                                                   asio::ip::tcp::endpoint endpoint,
                                                   std::string host, Duration timeout) {
  auto ex = co_await asio::this_coro::executor;
  asio::ip::tcp::socket socket(ex);
  ProbeDeadline deadline(ex, timeout, [&socket] { socket.close(); });
  std::string error = co_await ConnectWithin(socket, endpoint, deadline, timeout);
  if (!error.empty()) co_return membership::ProbeResult{false, std::move(error), {}};
  const std::string request = fmt::format(
      "GET {} HTTP/1.0\r\nHost: {}\r\nUser-Agent: vsc-health-check\r\nConnection: close\r\n\r\n",
      check.path, host);
  auto [ec, n] = co_await asio::async_write(socket, asio::buffer(request), kTuple);
  if (deadline.expired()) co_return membership::ProbeResult{false, TimeoutText(timeout), {}};
  if (ec) co_return membership::ProbeResult{false, "sending the request: " + ec.message(), {}};
  std::string response;
  error = co_await ReadAll(socket, response, deadline, timeout);
  if (!error.empty()) co_return membership::ProbeResult{false, std::move(error), {}};
  co_return JudgeHttpResponse(response, check);
}

}  // namespace vsc::director
