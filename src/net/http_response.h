// HttpResponse and its HTTP/1.1 serialization.
//
// The serializer owns framing: it always writes Content-Length and Connection itself and drops
// user headers with those names (or Transfer-Encoding), so a handler cannot desynchronise a
// keep-alive connection. An empty content_type omits the Content-Type header.
#pragma once

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

  // First header with this name, compared case-insensitively ("" when absent).
  std::string_view Header(std::string_view name) const;
};

// "OK", "Not Found"...; "Unknown" for codes not in the table.
std::string_view ReasonPhrase(int status);

// Status line, headers and (unless `include_body` is false, as for HEAD) the body.
std::string SerializeResponse(const HttpResponse& response, bool keep_alive,
                              bool include_body = true);

// A JSON error response: {"error": "<message>"} with the message JSON-escaped.
HttpResponse JsonError(int status, std::string_view message);

}  // namespace vsc::net
