// Sans-I/O HTTP/1.1 response parser, the client side of HttpRequestSync.
//
// Bodies framed by Content-Length, chunked (Transfer-Encoding: chunked, the only coding
// accepted; trailers are read and dropped), or delimited by the server closing the connection
// (call FinishEof() when the peer closes). Interim 1xx responses are skipped. A response to HEAD,
// 204 and 304 has no body. Limits: status line 8 KiB, headers 64 KiB / 100 fields, body `max_body`.
// Errors carry status 0 and a message; after an error the parser keeps returning it.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "net/http_parser.h"
#include "net/http_response.h"

namespace vsc::net {

using HttpResponseParseResult = std::variant<HttpNeedMore, HttpResponse, HttpParseError>;

class HttpResponseParser {
 public:
  explicit HttpResponseParser(size_t max_body = 64 * 1024 * 1024, bool head_request = false)
      : max_body_(max_body), head_request_(head_request) {}

  HttpResponseParseResult Feed(std::string_view bytes);
  // The peer closed the connection: completes a close-delimited body, otherwise an error.
  HttpResponseParseResult FinishEof();
  // Whether the server asked to close after this response ("Connection: close" or HTTP/1.0).
  bool close_after() const { return close_after_; }

  // A streamed answer (a chunked body that goes on, such as etcd's watch): once headers_done(),
  // head() has the status and headers, and TakeBody() takes the chunk data decoded so far (the
  // parser then forgets the bytes it has parsed, so a long stream takes bounded memory).
  bool headers_done() const { return state_ != State::kStatusLine && state_ != State::kHeaders; }
  const HttpResponse& head() const { return resp_; }
  std::string TakeBody();

 private:
  enum class State {
    kStatusLine,
    kHeaders,
    kBody,
    kBodyUntilEof,
    kChunkSize,
    kChunkData,
    kTrailers,
    kDone
  };
  HttpResponseParseResult Fail(std::string message);
  std::optional<HttpParseError> FinishHeaders();
  HttpResponseParseResult Complete();
  // A chunk-size line: sets chunk_left_ and the next state, or an error.
  std::optional<HttpResponseParseResult> OnChunkSize(std::string_view line);

  size_t max_body_;
  bool head_request_;
  std::string buf_;
  size_t line_start_ = 0;
  size_t scan_ = 0;
  State state_ = State::kStatusLine;
  size_t header_bytes_ = 0;
  size_t body_len_ = 0;
  size_t chunk_left_ = 0;  // bytes of the current chunk (kChunkData)
  bool close_after_ = false;
  int version_minor_ = 1;
  HttpResponse resp_;
  std::optional<HttpParseError> error_;
};

}  // namespace vsc::net
