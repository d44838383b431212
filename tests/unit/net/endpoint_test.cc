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

TEST(EndpointTest, RejectsMalformed) {
  for (const char* bad : {"10.0.0.1", "10.0.0.1:", "10.0.0.1:65536", "10.0.0.1:-1", "1.2.3.4:8x",
                          "[::1]:80", "::1:80", "no-such-host.invalid:80"}) {
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
