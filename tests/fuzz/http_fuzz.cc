// Fuzzes the HTTP/1.1 request and response parsers (src/net/http_parser.h,
// src/net/http_response_parser.h). The first byte picks the parser and the feed chunk size, so
// every input is also parsed split, and the split result must equal the whole-input result; a
// response is also read as a stream (TakeBody after each feed).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "net/http_parser.h"
#include "net/http_response_parser.h"

namespace {

using vsc::net::HttpLimits;
using vsc::net::HttpNeedMore;
using vsc::net::HttpParseError;
using vsc::net::HttpRequest;
using vsc::net::HttpRequestParser;
using vsc::net::HttpResponse;
using vsc::net::HttpResponseParser;

// A compact trace of what the parser produced, to compare split and whole feeding.
std::string RequestTrace(std::string_view in, size_t chunk, const HttpLimits& limits) {
  HttpRequestParser p(limits);
  std::string trace;
  for (size_t off = 0; off < in.size(); off += chunk) {
    auto r = p.Feed(in.substr(off, chunk));
    for (;;) {
      if (auto* req = std::get_if<HttpRequest>(&r)) {
        if (req->body.size() > limits.max_body) std::abort();
        if (req->headers.size() > limits.max_headers) std::abort();
        if (req->path.empty() || req->method.empty()) std::abort();
        trace += "R" + req->method + " " + req->target + " " + std::to_string(req->body.size()) +
                 (req->keep_alive ? "k" : "c") + std::to_string(req->headers.size()) + ";";
        r = p.Next();
        continue;
      }
      if (auto* err = std::get_if<HttpParseError>(&r)) {
        if (err->status < 400 || err->status > 505 || err->message.empty()) std::abort();
        return trace + "E" + std::to_string(err->status);
      }
      break;
    }
  }
  return trace + "N" + std::to_string(p.buffered());
}

std::string ResponseTrace(std::string_view in, size_t chunk) {
  HttpResponseParser p(1 << 20);
  for (size_t off = 0; off < in.size(); off += chunk) {
    auto r = p.Feed(in.substr(off, chunk));
    if (auto* resp = std::get_if<HttpResponse>(&r)) {
      if (resp->body.size() > (1u << 20)) std::abort();
      return "R" + std::to_string(resp->status) + " " + std::to_string(resp->body.size());
    }
    if (std::holds_alternative<HttpParseError>(r)) return "E";
  }
  auto r = p.FinishEof();
  if (auto* resp = std::get_if<HttpResponse>(&r)) {
    return "R" + std::to_string(resp->status) + " " + std::to_string(resp->body.size());
  }
  return "E";
}

// The same input read as a stream (TakeBody after every feed, as etcd's watch reads it): the
// status and the body's size when the response completed, as ResponseTrace gives them.
std::string StreamTrace(std::string_view in, size_t chunk) {
  HttpResponseParser p(1 << 20);
  std::string body;
  for (size_t off = 0; off < in.size(); off += chunk) {
    auto r = p.Feed(in.substr(off, chunk));
    if (auto* resp = std::get_if<HttpResponse>(&r)) {
      return "R" + std::to_string(resp->status) + " " +
             std::to_string(body.size() + resp->body.size());
    }
    if (std::holds_alternative<HttpParseError>(r)) return "E";
    if (p.headers_done()) body += p.TakeBody();
  }
  return "N" + std::to_string(body.size());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t mode = data[0];
  std::string_view in(reinterpret_cast<const char*>(data + 1), size - 1);
  const size_t chunk = 1 + (mode >> 1) % 16;
  if ((mode & 1) == 0) {
    // Small limits so the fuzzer reaches every limit branch with short inputs.
    HttpLimits limits;
    limits.max_request_line = 64;
    limits.max_header_bytes = 256;
    limits.max_headers = 8;
    limits.max_body = 128;
    std::string whole = RequestTrace(in, in.size() == 0 ? 1 : in.size(), limits);
    if (RequestTrace(in, chunk, limits) != whole) std::abort();
    // Default limits must not crash either.
    RequestTrace(in, chunk, HttpLimits{});
  } else {
    std::string whole = ResponseTrace(in, in.size() == 0 ? 1 : in.size());
    if (ResponseTrace(in, chunk) != whole) std::abort();
    const std::string streamed = StreamTrace(in, chunk);
    // Taking the body as it comes changes neither the response nor its body's size.
    if (streamed[0] == 'R' && streamed != whole) std::abort();
  }
  return 0;
}
