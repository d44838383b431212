#include "net/endpoint.h"

#include <gtest/gtest.h>

#include "common/random.h"

namespace vsc::net {
namespace {

TEST(EndpointTest, ParsesDottedQuadAndPort) {
  auto ep = ParseUdpEndpoint("10.1.2.3:9000");
  ASSERT_TRUE(ep.ok()) << ep.status().ToString();
  EXPECT_EQ(ep->address().to_string(), "10.1.2.3");
  EXPECT_EQ(ep->port(), 9000);
  auto tep = ParseTcpEndpoint("127.0.0.1:0");
  ASSERT_TRUE(tep.ok());
  EXPECT_EQ(tep->port(), 0);
}

TEST(EndpointTest, WildcardAndLocalhost) {
  EXPECT_EQ(ParseTcpEndpoint(":80")->address().to_string(), "0.0.0.0");
  EXPECT_EQ(ParseTcpEndpoint("*:80")->address().to_string(), "0.0.0.0");
  EXPECT_EQ(ParseTcpEndpoint("localhost:80")->address().to_string(), "127.0.0.1");
}

TEST(EndpointTest, ParsesBracketedIpv6) {
  auto udp = ParseUdpEndpoint("[::1]:5353");
  ASSERT_TRUE(udp.ok()) << udp.status().ToString();
  EXPECT_TRUE(udp->address().is_v6());
  EXPECT_EQ(udp->address().to_string(), "::1");
  EXPECT_EQ(udp->port(), 5353);
  EXPECT_EQ(ToString(*udp), "[::1]:5353");
  auto tcp = ParseTcpEndpoint("[fd00::2:1]:80");
  ASSERT_TRUE(tcp.ok());
  EXPECT_EQ(ToString(*tcp), "[fd00::2:1]:80");
  auto bare = ParseTcpEndpoint("::1:80");
  ASSERT_FALSE(bare.ok());
  EXPECT_NE(bare.status().message().find("brackets"), std::string::npos) << bare.status().message();
}

TEST(EndpointTest, RejectsMalformed) {
  for (const char* bad :
       {"10.0.0.1", "10.0.0.1:", "10.0.0.1:65536", "10.0.0.1:-1", "1.2.3.4:8x", "::1:80", "[::1]",
        "[::1:80", "[1.2.3.4]:80", "[::g]:80", "a[b]:80", "no-such-host.invalid:80"}) {
    auto r = ParseUdpEndpoint(bad);
    EXPECT_FALSE(r.ok()) << bad;
    if (!r.ok()) {
      EXPECT_EQ(r.status().code(), Code::kInvalidArgument) << bad;
      EXPECT_NE(r.status().message().find(bad), std::string::npos) << r.status().message();
    }
  }
}

// Property: ToString and Parse are inverse for every address/port.
TEST(EndpointTest, RoundTripsRandomEndpoints) {
  Random rng(7);
  for (int i = 0; i < 2000; ++i) {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = static_cast<uint32_t>(rng.Next());
    a.sin_port = static_cast<uint16_t>(rng.Next());
    std::string s = ToString(a);
    auto ep = ParseUdpEndpoint(s);
    ASSERT_TRUE(ep.ok()) << s;
    sockaddr_in b = ToSockaddr(*ep);
    EXPECT_EQ(a.sin_addr.s_addr, b.sin_addr.s_addr) << s;
    EXPECT_EQ(a.sin_port, b.sin_port) << s;
    EXPECT_EQ(ToString(ToUdpEndpoint(b)), s);
  }
}

}  // namespace
}  // namespace vsc::net
