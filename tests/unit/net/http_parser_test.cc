#include "net/http_parser.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "common/random.h"

namespace vsc::net {
namespace {

struct Parsed {
  std::vector<HttpRequest> requests;
  std::optional<HttpParseError> error;
  size_t buffered = 0;
};

// Feeds `input` in pieces of `chunk` bytes (0 = all at once), draining pipelined requests after
// each piece, as a server session does.
Parsed FeedInChunks(const std::string& input, size_t chunk, HttpLimits limits = {}) {
  HttpRequestParser p(limits);
  Parsed out;
  size_t step = chunk == 0 ? input.size() : chunk;
  for (size_t off = 0; off < input.size() || (off == 0 && input.empty()); off += step) {
    HttpParseResult r = p.Feed(std::string_view(input).substr(off, step));
    for (;;) {
      if (auto* req = std::get_if<HttpRequest>(&r)) {
        out.requests.push_back(std::move(*req));
        r = p.Next();
        continue;
      }
      if (auto* err = std::get_if<HttpParseError>(&r)) {
        out.error = *err;
        return out;
      }
      break;
    }
    if (input.empty()) break;
  }
  out.buffered = p.buffered();
  return out;
}

const size_t kSplits[] = {1, 2, 5, 10, 100, 0};

TEST(HttpParserTest, SimpleGetOnEverySplit) {
  const std::string in =
      "GET /v1/resources/1,2,3?pretty=1 HTTP/1.1\r\nHost: director:8080\r\n"
      "Authorization: Bearer tok\r\nX-Empty:\r\n\r\n";
  for (size_t split : kSplits) {
    Parsed p = FeedInChunks(in, split);
    ASSERT_FALSE(p.error) << split << ": " << p.error->message;
    ASSERT_EQ(p.requests.size(), 1u) << split;
    const HttpRequest& r = p.requests[0];
    EXPECT_EQ(r.method, "GET");
    EXPECT_EQ(r.target, "/v1/resources/1,2,3?pretty=1");
    EXPECT_EQ(r.path, "/v1/resources/1,2,3");
    EXPECT_EQ(r.query, "pretty=1");
    EXPECT_EQ(r.headers.size(), 3u);
    EXPECT_EQ(r.Header("host"), "director:8080");
    EXPECT_EQ(r.Header("AUTHORIZATION"), "Bearer tok");
    EXPECT_EQ(r.Header("x-empty"), "");
    EXPECT_FALSE(r.Header("x-missing").has_value());
    EXPECT_TRUE(r.body.empty());
    EXPECT_TRUE(r.keep_alive);
    EXPECT_EQ(p.buffered, 0u);
  }
}

TEST(HttpParserTest, PipelinedRequestsComeOutInOrderOnEverySplit) {
  const std::string in =
      "GET /metrics HTTP/1.1\r\nHost: a\r\n\r\n"
      "POST /v1/servers HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: 14\r\n\r\n"
      "{\"weight\": 3}\n"
      "\r\n"  // a stray CRLF between requests is tolerated
      "DELETE /v1/servers/rs2 HTTP/1.1\r\nConnection: close\r\n\r\n"
      "GET /partial HTTP/1.1\r\n";
  for (size_t split : kSplits) {
    Parsed p = FeedInChunks(in, split);
    ASSERT_FALSE(p.error) << split << ": " << p.error->message;
    ASSERT_EQ(p.requests.size(), 3u) << split;
    EXPECT_EQ(p.requests[0].path, "/metrics");
    EXPECT_EQ(p.requests[1].method, "POST");
    EXPECT_EQ(p.requests[1].body, "{\"weight\": 3}\n");
    EXPECT_TRUE(p.requests[1].keep_alive);
    EXPECT_EQ(p.requests[2].method, "DELETE");
    EXPECT_FALSE(p.requests[2].keep_alive);
    EXPECT_EQ(p.buffered, std::string("GET /partial HTTP/1.1\r\n").size()) << split;
  }
}

TEST(HttpParserTest, AnExpectContinueHeadAwaitsItsBody) {
  HttpRequestParser p;
  const std::string head =
      "POST /db/execute HTTP/1.1\r\nHost: x\r\nExpect: 100-Continue\r\nContent-Length: 4\r\n\r\n";
  EXPECT_FALSE(p.AwaitingContinue());
  ASSERT_TRUE(std::holds_alternative<HttpNeedMore>(p.Feed(head.substr(0, 20))));
  EXPECT_FALSE(p.AwaitingContinue()) << "not before the whole head is in";
  ASSERT_TRUE(std::holds_alternative<HttpNeedMore>(p.Feed(head.substr(20))));
  EXPECT_TRUE(p.AwaitingContinue());
  ASSERT_TRUE(std::holds_alternative<HttpNeedMore>(p.Feed("ab")));
  EXPECT_TRUE(p.AwaitingContinue());
  ASSERT_TRUE(std::holds_alternative<HttpRequest>(p.Feed("cd")));
  EXPECT_FALSE(p.AwaitingContinue()) << "the next request has not asked";
  HttpRequestParser plain;
  plain.Feed("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n\r\n");
  EXPECT_FALSE(plain.AwaitingContinue()) << "no Expect header";
}

TEST(HttpParserTest, KeepAliveFollowsHttp11Rules) {
  struct Case {
    const char* version;
    const char* connection;  // nullptr: no header
    bool keep_alive;
  } cases[] = {
      {"HTTP/1.1", nullptr, true},          {"HTTP/1.1", "close", false},
      {"HTTP/1.1", "Keep-Alive", true},     {"HTTP/1.1", "upgrade, CLOSE", false},
      {"HTTP/1.0", nullptr, false},         {"HTTP/1.0", "keep-alive", true},
      {"HTTP/1.0", "Keep-Alive, close", false},
  };
  for (const Case& c : cases) {
    std::string in = std::string("GET / ") + c.version + "\r\n";
    if (c.connection) in += std::string("Connection: ") + c.connection + "\r\n";
    in += "\r\n";
    Parsed p = FeedInChunks(in, 0);
    ASSERT_EQ(p.requests.size(), 1u) << in;
    EXPECT_EQ(p.requests[0].keep_alive, c.keep_alive) << in;
  }
}

TEST(HttpParserTest, AcceptsBareLfAbsoluteFormAndAsterisk) {
  Parsed p = FeedInChunks(
      "\r\n\nGET http://Example.com:81/a/b?q HTTP/1.1\nHost: x\n\n"
      "OPTIONS * HTTP/1.1\r\n\r\n"
      "GET https://h HTTP/1.1\r\n\r\n",
      3);
  ASSERT_FALSE(p.error) << p.error->message;
  ASSERT_EQ(p.requests.size(), 3u);
  EXPECT_EQ(p.requests[0].path, "/a/b");
  EXPECT_EQ(p.requests[0].query, "q");
  EXPECT_EQ(p.requests[1].path, "*");
  EXPECT_EQ(p.requests[2].path, "/");
}

struct ErrorCase {
  std::string name;
  std::string input;
  int status;
};

TEST(HttpParserTest, MalformedAndUnsupportedRequestsGetTheRightStatus) {
  const std::vector<ErrorCase> cases = {
      {"garbage", "\x16\x03\x01\x02\x01 hello\r\n\r\n", 400},
      {"no version", "GET /\r\n\r\n", 400},
      {"double space", "GET  / HTTP/1.1\r\n\r\n", 400},
      {"bad version", "GET / HTTP/1.x\r\n\r\n", 400},
      {"lowercase version", "GET / http/1.1\r\n\r\n", 400},
      {"http2", "GET / HTTP/2.0\r\n\r\n", 505},
      {"relative target", "GET index.html HTTP/1.1\r\n\r\n", 400},
      {"control in target", "GET /a\x01 HTTP/1.1\r\n\r\n", 400},
      {"bad method", "G(T / HTTP/1.1\r\n\r\n", 400},
      {"space before colon", "GET / HTTP/1.1\r\nHost : x\r\n\r\n", 400},
      {"no colon", "GET / HTTP/1.1\r\nHost x\r\n\r\n", 400},
      {"empty name", "GET / HTTP/1.1\r\n: x\r\n\r\n", 400},
      {"obs fold", "GET / HTTP/1.1\r\nX: a\r\n  b\r\n\r\n", 400},
      {"nul in value", std::string("GET / HTTP/1.1\r\nX: a\0b\r\n\r\n", 26), 400},
      {"bad length", "POST / HTTP/1.1\r\nContent-Length: 1x\r\n\r\n", 400},
      {"negative length", "POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n", 400},
      {"conflicting lengths",
       "POST / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab", 400},
      {"te and cl",
       "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\nabc", 400},
      {"chunked", "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
       411},
      {"gzip", "POST / HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n", 501},
      {"many empty lines", std::string(20, '\n') + "GET / HTTP/1.1\r\n\r\n", 400},
  };
  for (const ErrorCase& c : cases) {
    for (size_t split : kSplits) {
      Parsed p = FeedInChunks(c.input, split);
      ASSERT_TRUE(p.error.has_value()) << c.name << " split " << split;
      EXPECT_EQ(p.error->status, c.status) << c.name << ": " << p.error->message;
      EXPECT_FALSE(p.error->message.empty());
      EXPECT_TRUE(p.requests.empty()) << c.name;
    }
  }
}

TEST(HttpParserTest, ErrorIsStickyAndEarlierPipelinedRequestsSurvive) {
  HttpRequestParser p;
  auto r = p.Feed("GET /ok HTTP/1.1\r\n\r\nBROKEN\r\n\r\n");
  ASSERT_TRUE(std::holds_alternative<HttpRequest>(r));
  r = p.Next();
  ASSERT_TRUE(std::holds_alternative<HttpParseError>(r));
  r = p.Feed("GET / HTTP/1.1\r\n\r\n");
  ASSERT_TRUE(std::holds_alternative<HttpParseError>(r));
  EXPECT_EQ(std::get<HttpParseError>(r).status, 400);
}

TEST(HttpParserTest, RequestLineLimit) {
  HttpLimits limits;
  const std::string prefix = "GET /";
  const std::string suffix = " HTTP/1.1";
  auto line_of = [&](size_t len) {
    return prefix + std::string(len - prefix.size() - suffix.size(), 'a') + suffix;
  };
  for (size_t split : kSplits) {
    Parsed ok = FeedInChunks(line_of(limits.max_request_line) + "\r\n\r\n", split);
    EXPECT_FALSE(ok.error) << split;
    EXPECT_EQ(ok.requests.size(), 1u);
    Parsed bad = FeedInChunks(line_of(limits.max_request_line + 1) + "\r\n\r\n", split);
    ASSERT_TRUE(bad.error) << split;
    EXPECT_EQ(bad.error->status, 414);
  }
  // Without a line end the parser must not buffer forever.
  Parsed endless = FeedInChunks("GET /" + std::string(100000, 'a'), 1000);
  ASSERT_TRUE(endless.error);
  EXPECT_EQ(endless.error->status, 414);
}

TEST(HttpParserTest, HeaderCountLimit) {
  auto with_headers = [](size_t n) {
    std::string s = "GET / HTTP/1.1\r\n";
    for (size_t i = 0; i < n; ++i) s += "X-H" + std::to_string(i) + ": v\r\n";
    return s + "\r\n";
  };
  for (size_t split : kSplits) {
    Parsed ok = FeedInChunks(with_headers(100), split);
    ASSERT_FALSE(ok.error) << split;
    EXPECT_EQ(ok.requests.at(0).headers.size(), 100u);
    Parsed bad = FeedInChunks(with_headers(101), split);
    ASSERT_TRUE(bad.error) << split;
    EXPECT_EQ(bad.error->status, 431);
  }
}

TEST(HttpParserTest, HeaderBytesLimit) {
  HttpLimits limits;
  // Header block (all lines including the final CRLF) of exactly the limit, then one more byte.
  auto with_header_bytes = [](size_t total) {
    const std::string head = "X-Big: ";
    std::string line = head + std::string(total - head.size() - 4, 'v') + "\r\n";
    return "GET / HTTP/1.1\r\n" + line + "\r\n";
  };
  for (size_t split : kSplits) {
    Parsed ok = FeedInChunks(with_header_bytes(limits.max_header_bytes), split);
    ASSERT_FALSE(ok.error) << split << ": " << ok.error->message;
    Parsed bad = FeedInChunks(with_header_bytes(limits.max_header_bytes + 1), split);
    ASSERT_TRUE(bad.error) << split;
    EXPECT_EQ(bad.error->status, 431);
  }
  Parsed endless = FeedInChunks("GET / HTTP/1.1\r\nX: " + std::string(200000, 'v'), 4096);
  ASSERT_TRUE(endless.error);
  EXPECT_EQ(endless.error->status, 431);
}

TEST(HttpParserTest, BodyLimitIsCheckedBeforeTheBodyArrives) {
  HttpLimits limits;
  const std::string body(limits.max_body, 'b');
  for (size_t split : {size_t{100}, size_t{4096}, size_t{0}}) {
    Parsed ok = FeedInChunks(
        "POST /v1/x HTTP/1.1\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body,
        split);
    ASSERT_FALSE(ok.error) << split;
    ASSERT_EQ(ok.requests.size(), 1u);
    EXPECT_EQ(ok.requests[0].body.size(), body.size());
  }
  for (size_t split : kSplits) {
    Parsed bad = FeedInChunks("POST / HTTP/1.1\r\nContent-Length: " +
                                  std::to_string(limits.max_body + 1) + "\r\n\r\n",
                              split);
    ASSERT_TRUE(bad.error) << split;
    EXPECT_EQ(bad.error->status, 413);
  }
  Parsed huge = FeedInChunks("POST / HTTP/1.1\r\nContent-Length: 99999999999999999999999\r\n\r\n", 0);
  ASSERT_TRUE(huge.error);
  EXPECT_EQ(huge.error->status, 413);
}

// Property: any request built from valid parts parses back to the same parts, on random splits,
// several pipelined in one stream.
TEST(HttpParserTest, RandomValidRequestsRoundTrip) {
  Random rng(42);
  const char* methods[] = {"GET", "POST", "PUT", "DELETE", "HEAD", "PATCH"};
  const std::string tchars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.~!";
  for (int iter = 0; iter < 300; ++iter) {
    std::string stream;
    std::vector<HttpRequest> expected;
    const int n = 1 + static_cast<int>(rng.Uniform(4));
    for (int k = 0; k < n; ++k) {
      HttpRequest r;
      r.method = methods[rng.Uniform(6)];
      r.path = "/";
      for (uint64_t i = 0, len = rng.Uniform(30); i < len; ++i) {
        r.path += tchars[rng.Uniform(tchars.size())];
        if (rng.Uniform(8) == 0) r.path += '/';
      }
      if (rng.Uniform(2)) {
        for (uint64_t i = 0, len = 1 + rng.Uniform(20); i < len; ++i) {
          r.query += "ab=&,%"[rng.Uniform(6)];
        }
      }
      r.target = r.query.empty() && rng.Uniform(2) ? r.path : r.path + "?" + r.query;
      if (r.target == r.path) r.query.clear();
      for (uint64_t h = 0, hn = rng.Uniform(10); h < hn; ++h) {
        std::string name = "X-";
        for (uint64_t i = 0, len = 1 + rng.Uniform(10); i < len; ++i) {
          name += tchars[rng.Uniform(tchars.size())];
        }
        std::string value;
        for (uint64_t i = 0, len = rng.Uniform(40); i < len; ++i) {
          value += static_cast<char>(0x21 + rng.Uniform(0x7E - 0x21 + 1));
          if (rng.Uniform(10) == 0 && i + 1 < len) value += ' ';
        }
        r.headers.emplace_back(name, value);
      }
      for (uint64_t i = 0, len = rng.Uniform(3) == 0 ? rng.Uniform(3000) : 0; i < len; ++i) {
        r.body += static_cast<char>(rng.Next());
      }
      std::string wire = r.method + " " + r.target + " HTTP/1.1\r\n";
      for (const auto& [k, v] : r.headers) wire += k + ":" + (rng.Uniform(2) ? " " : "") + v + "\r\n";
      if (!r.body.empty() || rng.Uniform(2)) {
        wire += "Content-Length: " + std::to_string(r.body.size()) + "\r\n";
        r.headers.emplace_back("Content-Length", std::to_string(r.body.size()));
      }
      wire += "\r\n" + r.body;
      stream += wire;
      expected.push_back(std::move(r));
    }
    const size_t split = 1 + rng.Uniform(200);
    Parsed p = FeedInChunks(stream, split);
    ASSERT_FALSE(p.error) << "iter " << iter << ": " << p.error->message;
    ASSERT_EQ(p.requests.size(), expected.size()) << "iter " << iter;
    for (size_t k = 0; k < expected.size(); ++k) {
      const HttpRequest& got = p.requests[k];
      const HttpRequest& want = expected[k];
      EXPECT_EQ(got.method, want.method);
      EXPECT_EQ(got.target, want.target);
      EXPECT_EQ(got.path, want.path);
      EXPECT_EQ(got.query, want.query);
      EXPECT_EQ(got.headers, want.headers) << "iter " << iter;
      EXPECT_EQ(got.body, want.body);
      EXPECT_TRUE(got.keep_alive);
    }
    EXPECT_EQ(p.buffered, 0u);
  }
}

TEST(HttpParserTest, HeaderTokenHelpers) {
  EXPECT_TRUE(EqualsIgnoreCase("Content-Length", "content-LENGTH"));
  EXPECT_FALSE(EqualsIgnoreCase("Content-Length", "Content-Lengt"));
  EXPECT_TRUE(HeaderHasToken("keep-alive, Upgrade", "upgrade"));
  EXPECT_TRUE(HeaderHasToken(" close ", "close"));
  EXPECT_FALSE(HeaderHasToken("closed", "close"));
  EXPECT_FALSE(HeaderHasToken("", "close"));
}

}  // namespace
}  // namespace vsc::net
