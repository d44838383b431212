// HttpResponse and its HTTP/1.1 serialization.
//
// The serializer owns framing: it always writes Content-Length and Connection itself and drops
// user headers with those names (or Transfer-Encoding), so a handler cannot desynchronise a
// keep-alive connection. An empty content_type omits the Content-Type header.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace vsc::net {

struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;
  // Set: the server writes nothing itself. It releases the connection's descriptor (blocking
  // mode is the receiver's to set) to this function, which owns it from then on and answers on
  // it, e.g. a large body streamed from another thread; the server forgets the connection.
  // Plain HTTP only: on an HTTPS connection the server answers 500 instead.
  std::function<void(int fd)> hand_over;

  // First header with this name, compared case-insensitively ("" when absent).
  std::string_view Header(std::string_view name) const;
};

// "OK", "Not Found"...; "Unknown" for codes not in the table.
std::string_view ReasonPhrase(int status);

// Status line and headers (ending with the blank line) of an answer whose body of
// `content_length` bytes follows separately; `response.body` is ignored.
std::string SerializeHead(const HttpResponse& response, uint64_t content_length, bool keep_alive);

// Status line, headers and (unless `include_body` is false, as for HEAD) the body.
std::string SerializeResponse(const HttpResponse& response, bool keep_alive,
                              bool include_body = true);

// A JSON error response: {"error": "<message>"} with the message JSON-escaped.
HttpResponse JsonError(int status, std::string_view message);

}  // namespace vsc::net
