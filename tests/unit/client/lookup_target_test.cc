#include "client/lookup_target.h"

#include <gtest/gtest.h>

namespace vsc::client {
namespace {

TEST(LookupTargetTest, ParsesBothSchemes) {
  auto u = ParseLookupTarget("udp://127.0.0.1:7000");
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->transport, Transport::kUdp);
  EXPECT_EQ(u->host, "127.0.0.1");
  EXPECT_EQ(u->port, 7000);
  EXPECT_EQ(u->ToString(), "udp://127.0.0.1:7000");
  auto t = ParseLookupTarget("tcp://localhost:65535");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->transport, Transport::kTcp);
  EXPECT_EQ(t->host, "localhost");
  EXPECT_EQ(t->port, 65535);
}

TEST(LookupTargetTest, RefusesMalformedTargetsWithAHint) {
  for (const char* bad : {"127.0.0.1:7000", "http://h:1", "udp://h", "udp://:80", "udp://h:0",
                          "udp://h:65536", "udp://h:12x", "tcp://h:", "udp://h:-1"}) {
    auto r = ParseLookupTarget(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
    EXPECT_NE(r.status().message().find(bad), std::string::npos) << r.status().message();
  }
}

TEST(LookupTargetTest, ResolvesLoopbackAndRefusesUnknownNames) {
  auto a = ResolveHost("127.0.0.1", 9);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(FormatAddress(*a), "127.0.0.1:9");
  auto named = ResolveHost("localhost", 9);
  ASSERT_TRUE(named.ok()) << named.status().ToString();
  EXPECT_EQ(FormatAddress(*named), "127.0.0.1:9");
  EXPECT_FALSE(ResolveHost("no-such-host.invalid", 9).ok());
}

TEST(LookupTargetTest, ResolveHostTakesIpv6LiteralsBareOrBracketed) {
  auto bare = ResolveHost("::1", 7000);
  ASSERT_TRUE(bare.ok()) << bare.status().ToString();
  EXPECT_TRUE(bare->is_v6());
  EXPECT_EQ(FormatAddress(*bare), "[::1]:7000");
  auto bracketed = ResolveHost("[fd00::7]", 80);
  ASSERT_TRUE(bracketed.ok());
  EXPECT_EQ(FormatAddress(*bracketed), "[fd00::7]:80");
  auto v4 = ResolveHost("127.0.0.1", 9);
  ASSERT_TRUE(v4.ok());
  EXPECT_FALSE(v4->is_v6());
  EXPECT_FALSE(ResolveHost("[127.0.0.1]", 9).ok());
  auto target = ParseLookupTarget("udp://[::1]:7000");
  ASSERT_TRUE(target.ok()) << target.status().ToString();
  EXPECT_EQ(target->host, "[::1]");
  EXPECT_EQ(target->port, 7000);
}

TEST(LookupTargetTest, CheckLookupIdsAllowsOneToTen) {
  std::vector<uint64_t> ids;
  EXPECT_FALSE(CheckLookupIds(ids).ok());
  for (int n = 1; n <= 10; ++n) {
    ids.push_back(n);
    EXPECT_TRUE(CheckLookupIds(ids).ok()) << n;
  }
  ids.push_back(11);
  EXPECT_EQ(CheckLookupIds(ids).message(),
            "lookup of 11 ids refused: send 1 to 10 ids per request");
}

TEST(LookupTargetTest, AnswersFromResponseMapsStatusesAndChecksIds) {
  const uint64_t asked[] = {3, 4};
  using proto::LookupStatus;
  const std::pair<LookupStatus, Code> cases[] = {
      {LookupStatus::kBadRequest, Code::kInvalidArgument},
      {LookupStatus::kOverloaded, Code::kResourceExhausted},
      {LookupStatus::kInternal, Code::kInternal}};
  for (const auto& [status, code] : cases) {
    auto r = AnswersFromResponse({1, status, {}}, asked);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), code);
  }
  auto good = AnswersFromResponse({1, LookupStatus::kOk, {{3, true, "a"}, {4, false, ""}}}, asked);
  ASSERT_TRUE(good.ok());
  EXPECT_EQ(good->at(0).node, "a");
  EXPECT_EQ(AnswersFromResponse({1, LookupStatus::kOk, {{3, true, "a"}}}, asked).status().code(),
            Code::kDataLoss);
  EXPECT_EQ(AnswersFromResponse({1, LookupStatus::kOk, {{4, false, ""}, {3, true, "a"}}}, asked)
                .status()
                .code(),
            Code::kDataLoss);
}

}  // namespace
}  // namespace vsc::client
