// Sans-I/O HTTP/1.1 request parser for the admin API and the resource lookup endpoint.
//
// Feed() appends bytes and returns the next complete request, NeedMore, or an Error carrying
// the status to answer before closing (400 malformed, 411 chunked body, 413 body too large,
// 414 request line too long, 431 headers too large or too many, 501 unknown transfer coding,
// 505 HTTP version). Pipelined requests: after a request is returned, the bytes after it stay
// buffered; call Next() (Feed with nothing) until it says NeedMore. After an Error the parser
// keeps returning that error; the connection must be closed.
//
// What is accepted: "METHOD SP target SP HTTP/1.x", lines ended by CRLF or a bare LF, up to
// 8 empty lines before a request, bodies framed by Content-Length only (Transfer-Encoding with
// a Content-Length, or differing Content-Length values, are refused as request smuggling
// vectors). Host is not required. `path` is the raw (not percent-decoded) path of an
// origin-form or absolute-form target; `query` is what follows '?', without it.
// Keep-alive: HTTP/1.1 unless "Connection: close"; HTTP/1.0 only with "Connection: keep-alive".
// Not thread safe; one parser per connection.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace vsc::net {

struct HttpRequest {
  std::string method;
  std::string target;  // as sent: "/v1/resources/1,2?x=y"
  std::string path;    // "/v1/resources/1,2"
  std::string query;   // "x=y"
  std::vector<std::pair<std::string, std::string>> headers;  // names as sent, values trimmed
  std::string body;
  bool keep_alive = true;
  int version_minor = 1;  // HTTP/1.<version_minor>

  // First header with this name, compared case-insensitively.
  std::optional<std::string_view> Header(std::string_view name) const;
};

struct HttpLimits {
  size_t max_request_line = 8 * 1024;
  size_t max_header_bytes = 64 * 1024;  // all header lines together
  size_t max_headers = 100;
  size_t max_body = 1024 * 1024;
};

struct HttpNeedMore {};
struct HttpParseError {
  int status;           // the response status to send before closing
  std::string message;  // for the response body and the log
};
using HttpParseResult = std::variant<HttpNeedMore, HttpRequest, HttpParseError>;

class HttpRequestParser {
 public:
  explicit HttpRequestParser(HttpLimits limits = {}) : limits_(limits) {}

  HttpParseResult Feed(std::string_view bytes);
  HttpParseResult Feed(std::span<const uint8_t> bytes) {
    return Feed(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
  }
  HttpParseResult Next() { return Feed(std::string_view()); }

  // Bytes received and not yet returned as part of a request.
  size_t buffered() const { return buf_.size() - start_; }

  // True while the head of a request with "Expect: 100-continue" is in and its body is not:
  // the server should send "HTTP/1.1 100 Continue" (curl otherwise waits a second before
  // sending a body over 1 MiB, RFC 9110 §10.1.1).
  bool AwaitingContinue() const;

 private:
  enum class State { kRequestLine, kHeaders, kBody };
  HttpParseResult Fail(int status, std::string message);
  std::optional<HttpParseError> ParseRequestLine(std::string_view line);
  std::optional<HttpParseError> ParseHeaderLine(std::string_view line);
  // Validates framing and connection headers once the header block is complete; on success the
  // body length is in body_len_.
  std::optional<HttpParseError> FinishHeaders();
  void ResetForNext();

  HttpLimits limits_;
  std::string buf_;
  size_t start_ = 0;       // first byte of the request being parsed
  size_t line_start_ = 0;  // first byte of the current line
  size_t scan_ = 0;        // bytes before this were searched for '\n' already
  State state_ = State::kRequestLine;
  int empty_lines_ = 0;
  size_t header_bytes_ = 0;
  size_t body_len_ = 0;
  HttpRequest req_;
  std::optional<HttpParseError> error_;
};

// Lower-case ASCII, case-insensitive equality and comma-list token search (for Connection).
bool EqualsIgnoreCase(std::string_view a, std::string_view b);
bool HeaderHasToken(std::string_view value, std::string_view token);

}  // namespace vsc::net
