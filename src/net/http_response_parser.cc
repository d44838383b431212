#include "net/http_response_parser.h"

#include <charconv>

namespace vsc::net {
namespace {

constexpr size_t kMaxStatusLine = 8 * 1024;
constexpr size_t kMaxHeaderBytes = 64 * 1024;
constexpr size_t kMaxHeaders = 100;

std::string_view TrimOws(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

}  // namespace

HttpResponseParseResult HttpResponseParser::Fail(std::string message) {
  error_ = HttpParseError{0, "bad HTTP response: " + std::move(message)};
  return *error_;
}

std::optional<HttpParseError> HttpResponseParser::FinishHeaders() {
  std::optional<uint64_t> length;
  bool chunked = false;
  bool conn_close = false;
  bool conn_keep_alive = false;
  resp_.content_type.clear();
  for (const auto& [name, value] : resp_.headers) {
    if (EqualsIgnoreCase(name, "content-length")) {
      uint64_t n = 0;
      auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
      if (value.empty() || ec != std::errc() || ptr != value.data() + value.size()) {
        return HttpParseError{0, "bad HTTP response: bad Content-Length"};
      }
      if (length && *length != n) {
        return HttpParseError{0, "bad HTTP response: conflicting Content-Length headers"};
      }
      length = n;
    } else if (EqualsIgnoreCase(name, "transfer-encoding")) {
      // Only "chunked" alone: a compressed transfer coding is something this client never asks
      // for (etcd's JSON gateway streams its keepalive answers chunked).
      if (!EqualsIgnoreCase(std::string(TrimOws(value)), "chunked")) {
        return HttpParseError{0, "bad HTTP response: Transfer-Encoding \"" + value.substr(0, 32) +
                                     "\" is not supported by this client (only chunked)"};
      }
      chunked = true;
    } else if (EqualsIgnoreCase(name, "connection")) {
      if (HeaderHasToken(value, "close")) conn_close = true;
      if (HeaderHasToken(value, "keep-alive")) conn_keep_alive = true;
    } else if (EqualsIgnoreCase(name, "content-type")) {
      resp_.content_type = value;
    }
  }
  close_after_ = version_minor_ >= 1 ? conn_close : !conn_keep_alive;
  const bool bodyless = head_request_ || resp_.status == 204 || resp_.status == 304;
  if (bodyless) {
    body_len_ = 0;
    state_ = State::kBody;
    return std::nullopt;
  }
  if (chunked) {
    if (length) {
      return HttpParseError{0, "bad HTTP response: both Transfer-Encoding and Content-Length"};
    }
    state_ = State::kChunkSize;
    return std::nullopt;
  }
  if (!length) {
    state_ = State::kBodyUntilEof;
    close_after_ = true;
    return std::nullopt;
  }
  if (*length > max_body_) {
    return HttpParseError{0, "bad HTTP response: body of " + std::to_string(*length) +
                                 " bytes exceeds the client's limit of " +
                                 std::to_string(max_body_)};
  }
  body_len_ = static_cast<size_t>(*length);
  state_ = State::kBody;
  return std::nullopt;
}

std::optional<HttpResponseParseResult> HttpResponseParser::OnChunkSize(std::string_view line) {
  // "1a3f" or "1a3f;extension": the size in hex; 0 ends the body (trailers may follow).
  const std::string_view hex = TrimOws(line.substr(0, line.find(';')));
  uint64_t n = 0;
  auto [ptr, ec] = std::from_chars(hex.data(), hex.data() + hex.size(), n, 16);
  if (hex.empty() || ec != std::errc() || ptr != hex.data() + hex.size()) {
    return Fail("bad chunk size line");
  }
  if (n > max_body_ || resp_.body.size() + n > max_body_) {
    return Fail("body exceeds the client's limit of " + std::to_string(max_body_));
  }
  chunk_left_ = static_cast<size_t>(n);
  state_ = n == 0 ? State::kTrailers : State::kChunkData;
  return std::nullopt;
}

HttpResponseParseResult HttpResponseParser::Complete() {
  state_ = State::kDone;
  return std::move(resp_);
}

HttpResponseParseResult HttpResponseParser::Feed(std::string_view bytes) {
  if (error_) return *error_;
  if (state_ == State::kDone) return Fail("data after the complete response");
  buf_.append(bytes);
  for (;;) {
    if (state_ == State::kBody) {
      if (buf_.size() - line_start_ < body_len_) return HttpNeedMore{};
      resp_.body.assign(buf_, line_start_, body_len_);
      return Complete();
    }
    if (state_ == State::kChunkData) {
      // The chunk's bytes and the CRLF after them.
      if (buf_.size() - line_start_ < chunk_left_ + 2) return HttpNeedMore{};
      if (buf_.compare(line_start_ + chunk_left_, 2, "\r\n") != 0) {
        return Fail("chunk not followed by CRLF");
      }
      resp_.body.append(buf_, line_start_, chunk_left_);
      line_start_ = scan_ = line_start_ + chunk_left_ + 2;
      state_ = State::kChunkSize;
      continue;
    }
    if (state_ == State::kBodyUntilEof) {
      if (buf_.size() - line_start_ > max_body_) {
        return Fail("body exceeds the client's limit of " + std::to_string(max_body_));
      }
      return HttpNeedMore{};
    }
    size_t nl = buf_.find('\n', scan_);
    if (nl == std::string::npos) {
      scan_ = buf_.size();
      size_t partial = buf_.size() - line_start_;
      if (state_ == State::kStatusLine && partial > kMaxStatusLine) {
        return Fail("status line too long");
      }
      if (state_ != State::kStatusLine && header_bytes_ + partial > kMaxHeaderBytes) {
        return Fail("headers too large");
      }
      return HttpNeedMore{};
    }
    const size_t raw_len = nl + 1 - line_start_;
    std::string_view line(buf_.data() + line_start_, nl - line_start_);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    line_start_ = scan_ = nl + 1;

    if (state_ == State::kStatusLine) {
      // "HTTP/1.1 200 OK"; the reason phrase may be empty.
      if (line.size() < 12 || line.substr(0, 7) != "HTTP/1." || line[7] < '0' || line[7] > '9' ||
          line[8] != ' ' || (line.size() > 12 && line[12] != ' ')) {
        return Fail("malformed status line");
      }
      int status = 0;
      auto [ptr, ec] = std::from_chars(line.data() + 9, line.data() + 12, status);
      if (ec != std::errc() || ptr != line.data() + 12 || status < 100) {
        return Fail("malformed status code");
      }
      version_minor_ = line[7] - '0';
      resp_ = HttpResponse{};
      resp_.status = status;
      header_bytes_ = 0;
      state_ = State::kHeaders;
      continue;
    }

    header_bytes_ += raw_len;
    if (header_bytes_ > kMaxHeaderBytes) return Fail("headers too large");
    if (state_ == State::kChunkSize) {
      if (auto r = OnChunkSize(line)) return *r;
      continue;
    }
    if (state_ == State::kTrailers) {
      if (line.empty()) return Complete();
      continue;  // trailer fields are not used
    }
    if (line.empty()) {
      if (resp_.status < 200) {  // interim response: the real one follows
        state_ = State::kStatusLine;
        continue;
      }
      if (auto e = FinishHeaders()) {
        error_ = std::move(e);
        return *error_;
      }
      continue;
    }
    if (resp_.headers.size() >= kMaxHeaders) return Fail("more than 100 header fields");
    size_t colon = line.find(':');
    if (colon == std::string_view::npos || colon == 0) return Fail("malformed header line");
    resp_.headers.emplace_back(std::string(line.substr(0, colon)),
                               std::string(TrimOws(line.substr(colon + 1))));
  }
}

std::string HttpResponseParser::TakeBody() {
  std::string out = std::move(resp_.body);
  resp_.body.clear();
  if (state_ == State::kChunkSize || state_ == State::kChunkData || state_ == State::kTrailers) {
    buf_.erase(0, line_start_);
    scan_ -= line_start_;
    line_start_ = 0;
    header_bytes_ = 0;  // chunk-size lines count like header lines, per stretch taken
  }
  return out;
}

HttpResponseParseResult HttpResponseParser::FinishEof() {
  if (error_) return *error_;
  if (state_ == State::kBodyUntilEof) {
    resp_.body.assign(buf_, line_start_, std::string::npos);
    return Complete();
  }
  return Fail("connection closed before the response was complete");
}

}  // namespace vsc::net
