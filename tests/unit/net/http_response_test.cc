#include "net/http_response.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "common/random.h"
#include "net/http_response_parser.h"

namespace vsc::net {
namespace {

TEST(HttpResponseTest, SerializesStatusHeadersAndBody) {
  HttpResponse r;
  r.status = 404;
  r.body = "{\"error\":\"no such server\"}";
  r.headers = {{"X-Request-Id", "7"}, {"Content-Length", "999"}, {"connection", "upgrade"}};
  std::string wire = SerializeResponse(r, /*keep_alive=*/true);
  EXPECT_EQ(wire,
            "HTTP/1.1 404 Not Found\r\nContent-Type: application/json\r\nContent-Length: 26\r\n"
            "Connection: keep-alive\r\nX-Request-Id: 7\r\n\r\n{\"error\":\"no such server\"}");
  std::string head = SerializeResponse(r, false, /*include_body=*/false);
  EXPECT_NE(head.find("Content-Length: 26\r\n"), std::string::npos);
  EXPECT_NE(head.find("Connection: close\r\n"), std::string::npos);
  EXPECT_EQ(head.substr(head.size() - 4), "\r\n\r\n");
}

TEST(HttpResponseTest, NoContentHasNoLengthOrBody) {
  HttpResponse r;
  r.status = 204;
  r.content_type.clear();
  r.body = "ignored";
  EXPECT_EQ(SerializeResponse(r, true),
            "HTTP/1.1 204 No Content\r\nConnection: keep-alive\r\n\r\n");
}

TEST(HttpResponseTest, JsonErrorIsValidJsonForAnyMessage) {
  Random rng(3);
  for (int i = 0; i < 500; ++i) {
    std::string msg;
    for (uint64_t k = 0, n = rng.Uniform(50); k < n; ++k) msg += static_cast<char>(rng.Next());
    HttpResponse r = JsonError(400, msg);
    EXPECT_EQ(r.status, 400);
    auto j = nlohmann::json::parse(r.body, nullptr, /*allow_exceptions=*/false);
    ASSERT_FALSE(j.is_discarded()) << r.body;
    EXPECT_TRUE(j["error"].is_string());
  }
  EXPECT_EQ(nlohmann::json::parse(JsonError(500, "a \"b\"\n").body)["error"], "a \"b\"\n");
}

HttpResponseParseResult ParseInChunks(const std::string& wire, size_t chunk, bool eof,
                                      bool head = false) {
  HttpResponseParser p(64 * 1024 * 1024, head);
  HttpResponseParseResult r;
  size_t step = chunk == 0 ? wire.size() : chunk;
  for (size_t off = 0; off < wire.size(); off += step) {
    r = p.Feed(std::string_view(wire).substr(off, step));
    if (!std::holds_alternative<HttpNeedMore>(r)) return r;
  }
  if (eof) r = p.FinishEof();
  return r;
}

TEST(HttpResponseParserTest, RoundTripsSerializedResponsesOnEverySplit) {
  Random rng(11);
  for (int iter = 0; iter < 100; ++iter) {
    HttpResponse r;
    r.status = 200 + static_cast<int>(rng.Uniform(400));
    if (r.status == 204 || r.status == 304) r.status = 200;
    r.content_type = rng.Uniform(2) ? "text/plain; version=0.0.4" : "application/json";
    for (uint64_t i = 0, n = rng.Uniform(5000); i < n; ++i) r.body += static_cast<char>(rng.Next());
    r.headers = {{"X-Seq", std::to_string(iter)}};
    const std::string wire = SerializeResponse(r, rng.Uniform(2));
    for (size_t split : {1, 2, 5, 10, 100, 0}) {
      auto got = ParseInChunks(wire, split, false);
      auto* resp = std::get_if<HttpResponse>(&got);
      ASSERT_NE(resp, nullptr) << iter << " split " << split;
      EXPECT_EQ(resp->status, r.status);
      EXPECT_EQ(resp->content_type, r.content_type);
      EXPECT_EQ(resp->body, r.body);
      EXPECT_EQ(resp->Header("x-seq"), std::to_string(iter));
    }
  }
}

// A chunked body that goes on (etcd's watch): after the headers, TakeBody hands out the chunk
// data as it is decoded, whatever the splits, and the parser keeps only unparsed bytes.
TEST(HttpResponseParserTest, AStreamedChunkedBodyIsTakenAsItComes) {
  std::string wire = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
  std::string want;
  for (int i = 0; i < 2000; ++i) {  // more chunk-size lines than the header limit would allow
    const std::string line = "{\"n\":" + std::to_string(i) + "}\n";
    char size[16];
    std::snprintf(size, sizeof size, "%zx\r\n", line.size());
    wire += size + line + "\r\n";
    want += line;
  }
  for (size_t step : {size_t{1}, size_t{7}, size_t{4096}}) {
    HttpResponseParser p;
    std::string got;
    for (size_t at = 0; at < wire.size(); at += step) {
      auto r = p.Feed(std::string_view(wire).substr(at, step));
      ASSERT_TRUE(std::holds_alternative<HttpNeedMore>(r)) << "at " << at;
      if (p.headers_done()) got += p.TakeBody();
    }
    EXPECT_EQ(p.head().status, 200);
    EXPECT_EQ(got, want) << "step " << step;
  }
}

TEST(HttpResponseParserTest, CloseDelimitedBodyInterimAndHead) {
  auto r = ParseInChunks("HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\nuntil the end", 3,
                         /*eof=*/true);
  ASSERT_TRUE(std::holds_alternative<HttpResponse>(r));
  EXPECT_EQ(std::get<HttpResponse>(r).body, "until the end");

  r = ParseInChunks(
      "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\nok", 1, false);
  ASSERT_TRUE(std::holds_alternative<HttpResponse>(r));
  EXPECT_EQ(std::get<HttpResponse>(r).status, 201);
  EXPECT_EQ(std::get<HttpResponse>(r).body, "ok");

  r = ParseInChunks("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n", 0, false, /*head=*/true);
  ASSERT_TRUE(std::holds_alternative<HttpResponse>(r));
  EXPECT_TRUE(std::get<HttpResponse>(r).body.empty());
}

// etcd's JSON gateway answers a keepalive chunked; every split of the wire decodes the same.
TEST(HttpResponseParserTest, ChunkedBodyOnEverySplit) {
  const std::string wire =
      "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
      "5\r\n{\"a\":\r\n1a;ext=1\r\n\"abcdefghijklmnopqrstuvw\"}\r\n0\r\nX-Trailer: t\r\n\r\n";
  for (size_t split : {1, 2, 5, 10, 100, 0}) {
    auto got = ParseInChunks(wire, split, false);
    auto* resp = std::get_if<HttpResponse>(&got);
    ASSERT_NE(resp, nullptr) << "split " << split;
    EXPECT_EQ(resp->body, "{\"a\":\"abcdefghijklmnopqrstuvw\"}");
    EXPECT_EQ(resp->content_type, "application/json");
  }
  HttpResponseParser small(4);
  auto over = small.Feed("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\n");
  ASSERT_TRUE(std::holds_alternative<HttpParseError>(over));
  EXPECT_NE(std::get<HttpParseError>(over).message.find("limit"), std::string::npos);
  auto cut = ParseInChunks("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nab", 0, true);
  EXPECT_TRUE(std::holds_alternative<HttpParseError>(cut));
}

TEST(HttpResponseParserTest, RefusesMalformedAndTruncated) {
  for (const char* bad : {"HTTP/2 200 OK\r\n\r\n", "HTTP/1.1 2x0 OK\r\n\r\n",
                          "HTTP/1.1 200 OK\r\nContent-Length: a\r\n\r\n",
                          "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n",
                          "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n"
                          "Content-Length: 3\r\n\r\n0\r\n\r\n",
                          "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
                          "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabc\r\n",
                          "HTTP/1.1 200 OK\r\nno colon\r\n\r\n"}) {
    auto r = ParseInChunks(bad, 0, false);
    EXPECT_TRUE(std::holds_alternative<HttpParseError>(r)) << bad;
  }
  auto truncated = ParseInChunks("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc", 0, true);
  ASSERT_TRUE(std::holds_alternative<HttpParseError>(truncated));
  EXPECT_NE(std::get<HttpParseError>(truncated).message.find("closed before"), std::string::npos);
}

}  // namespace
}  // namespace vsc::net
