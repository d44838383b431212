#include "net/http_parser.h"

#include <charconv>

namespace vsc::net {
namespace {

constexpr int kMaxEmptyLinesBeforeRequest = 8;

char Lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

// RFC 9110 tchar.
bool IsTokenChar(unsigned char c) {
  if (c >= '0' && c <= '9') return true;
  if ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') return true;
  switch (c) {
    case '!':
    case '#':
    case '$':
    case '%':
    case '&':
    case '\'':
    case '*':
    case '+':
    case '-':
    case '.':
    case '^':
    case '_':
    case '`':
    case '|':
    case '~':
      return true;
    default:
      return false;
  }
}

bool IsToken(std::string_view s) {
  if (s.empty()) return false;
  for (unsigned char c : s) {
    if (!IsTokenChar(c)) return false;
  }
  return true;
}

std::string_view TrimOws(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

HttpParseError Bad(std::string message) { return HttpParseError{400, std::move(message)}; }

bool StartsWithIgnoreCase(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && EqualsIgnoreCase(s.substr(0, prefix.size()), prefix);
}

}  // namespace

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (Lower(a[i]) != Lower(b[i])) return false;
  }
  return true;
}

bool HeaderHasToken(std::string_view value, std::string_view token) {
  while (!value.empty()) {
    size_t comma = value.find(',');
    std::string_view item = TrimOws(value.substr(0, comma));
    if (EqualsIgnoreCase(item, token)) return true;
    if (comma == std::string_view::npos) break;
    value.remove_prefix(comma + 1);
  }
  return false;
}

std::optional<std::string_view> HttpRequest::Header(std::string_view name) const {
  for (const auto& [k, v] : headers) {
    if (EqualsIgnoreCase(k, name)) return std::string_view(v);
  }
  return std::nullopt;
}

HttpParseResult HttpRequestParser::Fail(int status, std::string message) {
  error_ = HttpParseError{status, std::move(message)};
  return *error_;
}

std::optional<HttpParseError> HttpRequestParser::ParseRequestLine(std::string_view line) {
  size_t sp1 = line.find(' ');
  size_t sp2 = line.rfind(' ');
  if (sp1 == std::string_view::npos || sp1 == sp2) {
    return Bad("malformed request line; expected \"METHOD /path HTTP/1.1\"");
  }
  std::string_view method = line.substr(0, sp1);
  std::string_view target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  std::string_view version = line.substr(sp2 + 1);
  if (!IsToken(method)) return Bad("malformed request line: bad method");
  if (target.empty()) return Bad("malformed request line: empty request target");
  for (unsigned char c : target) {
    if (c <= 0x20 || c >= 0x7F) {
      return Bad("malformed request line: request target must be visible ASCII without spaces");
    }
  }
  if (version.size() != 8 || version.substr(0, 5) != "HTTP/" || version[6] != '.' ||
      version[5] < '0' || version[5] > '9' || version[7] < '0' || version[7] > '9') {
    return Bad("malformed request line: bad HTTP version \"" + std::string(version.substr(0, 16)) +
               "\"");
  }
  if (version[5] != '1') {
    return HttpParseError{
        505, "HTTP version " + std::string(version.substr(5)) + " not supported; use HTTP/1.1"};
  }
  req_.method.assign(method);
  req_.target.assign(target);
  req_.version_minor = version[7] - '0';
  std::string_view path_query = target;
  if (target == "*") {
    req_.path = "*";
    return std::nullopt;
  }
  if (target.front() != '/') {
    size_t scheme_len = StartsWithIgnoreCase(target, "http://")    ? 7
                        : StartsWithIgnoreCase(target, "https://") ? 8
                                                                   : 0;
    if (scheme_len == 0) {
      return Bad("malformed request line: request target must start with '/'");
    }
    size_t slash = target.find_first_of("/?", scheme_len);
    path_query = slash == std::string_view::npos ? std::string_view("/") : target.substr(slash);
  }
  size_t q = path_query.find('?');
  req_.path.assign(path_query.substr(0, q));
  if (req_.path.empty()) req_.path = "/";
  if (q != std::string_view::npos) req_.query.assign(path_query.substr(q + 1));
  return std::nullopt;
}

std::optional<HttpParseError> HttpRequestParser::ParseHeaderLine(std::string_view line) {
  if (line.front() == ' ' || line.front() == '\t') {
    return Bad("obsolete header line folding is not accepted; put each header on one line");
  }
  size_t colon = line.find(':');
  if (colon == std::string_view::npos) return Bad("malformed header line (no ':')");
  std::string_view name = line.substr(0, colon);
  if (!IsToken(name))
    return Bad("malformed header name \"" + std::string(name.substr(0, 64)) + "\"");
  std::string_view value = TrimOws(line.substr(colon + 1));
  for (unsigned char c : value) {
    if ((c < 0x20 && c != '\t') || c == 0x7F) {
      return Bad("header \"" + std::string(name) + "\" contains a control character");
    }
  }
  req_.headers.emplace_back(std::string(name), std::string(value));
  return std::nullopt;
}

std::optional<HttpParseError> HttpRequestParser::FinishHeaders() {
  bool has_te = false;
  bool chunked = false;
  std::string te_value;
  std::optional<uint64_t> content_length;
  bool conn_close = false;
  bool conn_keep_alive = false;
  for (const auto& [name, value] : req_.headers) {
    if (EqualsIgnoreCase(name, "transfer-encoding")) {
      has_te = true;
      te_value = value;
      if (HeaderHasToken(value, "chunked")) chunked = true;
    } else if (EqualsIgnoreCase(name, "content-length")) {
      uint64_t n = 0;
      auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
      if (value.empty() || ptr != value.data() + value.size()) {
        return HttpParseError{
            400, "Content-Length \"" + value.substr(0, 32) + "\" is not a non-negative integer"};
      }
      if (ec == std::errc::result_out_of_range) n = UINT64_MAX;
      if (content_length && *content_length != n) {
        return HttpParseError{400, "conflicting Content-Length headers"};
      }
      content_length = n;
    } else if (EqualsIgnoreCase(name, "connection")) {
      if (HeaderHasToken(value, "close")) conn_close = true;
      if (HeaderHasToken(value, "keep-alive")) conn_keep_alive = true;
    }
  }
  if (has_te && content_length) {
    return HttpParseError{400, "both Transfer-Encoding and Content-Length present; send one"};
  }
  if (chunked) {
    return HttpParseError{411,
                          "chunked request bodies are not supported; send the body with "
                          "a Content-Length header"};
  }
  if (has_te) {
    return HttpParseError{501, "Transfer-Encoding \"" + te_value.substr(0, 32) +
                                   "\" is not implemented; send the body with Content-Length"};
  }
  body_len_ = 0;
  if (content_length) {
    if (*content_length > limits_.max_body) {
      return HttpParseError{413, "request body of " + std::to_string(*content_length) +
                                     " bytes exceeds the limit of " +
                                     std::to_string(limits_.max_body) + " bytes"};
    }
    body_len_ = static_cast<size_t>(*content_length);
  }
  req_.keep_alive = req_.version_minor >= 1 ? !conn_close : (conn_keep_alive && !conn_close);
  return std::nullopt;
}

void HttpRequestParser::ResetForNext() {
  buf_.erase(0, line_start_);
  start_ = line_start_ = scan_ = 0;
  state_ = State::kRequestLine;
  empty_lines_ = 0;
  header_bytes_ = 0;
  body_len_ = 0;
  req_ = HttpRequest{};
}

bool HttpRequestParser::AwaitingContinue() const {
  if (state_ != State::kBody || body_len_ == 0) return false;
  const auto expect = req_.Header("Expect");
  return expect && EqualsIgnoreCase(*expect, "100-continue");
}

HttpParseResult HttpRequestParser::Feed(std::string_view bytes) {
  if (error_) return *error_;
  buf_.append(bytes);
  for (;;) {
    if (state_ == State::kBody) {
      if (buf_.size() - line_start_ < body_len_) return HttpNeedMore{};
      req_.body.assign(buf_, line_start_, body_len_);
      line_start_ += body_len_;
      HttpRequest out = std::move(req_);
      ResetForNext();
      return out;
    }
    size_t nl = buf_.find('\n', scan_);
    if (nl == std::string::npos) {
      scan_ = buf_.size();
      // A partial line may end with the CR of its CRLF, hence the +1.
      size_t partial = buf_.size() - line_start_;
      if (state_ == State::kRequestLine && partial > limits_.max_request_line + 1) {
        return Fail(
            414, "request line longer than " + std::to_string(limits_.max_request_line) + " bytes");
      }
      if (state_ == State::kHeaders && header_bytes_ + partial > limits_.max_header_bytes) {
        return Fail(431, "request headers larger than " + std::to_string(limits_.max_header_bytes) +
                             " bytes");
      }
      return HttpNeedMore{};
    }
    const size_t raw_len = nl + 1 - line_start_;
    std::string_view line(buf_.data() + line_start_, nl - line_start_);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    line_start_ = scan_ = nl + 1;

    if (state_ == State::kRequestLine) {
      if (line.empty()) {
        if (++empty_lines_ > kMaxEmptyLinesBeforeRequest) {
          return Fail(400, "too many empty lines before the request line");
        }
        start_ = line_start_;
        continue;
      }
      if (line.size() > limits_.max_request_line) {
        return Fail(
            414, "request line longer than " + std::to_string(limits_.max_request_line) + " bytes");
      }
      if (auto e = ParseRequestLine(line)) return Fail(e->status, std::move(e->message));
      state_ = State::kHeaders;
      continue;
    }

    header_bytes_ += raw_len;
    if (header_bytes_ > limits_.max_header_bytes) {
      return Fail(431, "request headers larger than " + std::to_string(limits_.max_header_bytes) +
                           " bytes");
    }
    if (line.empty()) {
      if (auto e = FinishHeaders()) return Fail(e->status, std::move(e->message));
      state_ = State::kBody;
      continue;
    }
    if (req_.headers.size() >= limits_.max_headers) {
      return Fail(431, "more than " + std::to_string(limits_.max_headers) + " header fields");
    }
    if (auto e = ParseHeaderLine(line)) return Fail(e->status, std::move(e->message));
  }
}

}  // namespace vsc::net
