#include "vservice/service_key.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "vservice_test_util.h"

namespace vsc::vservice {
namespace {

using testing::Key;

TEST(Proto, ParsesAnyCaseAndPrintsLower) {
  EXPECT_EQ(*ParseProto("tcp"), Proto::kTcp);
  EXPECT_EQ(*ParseProto("UDP"), Proto::kUdp);
  EXPECT_EQ(ProtoName(Proto::kUdp), "udp");
  EXPECT_EQ(ParseProto("sctp").status().code(), Code::kInvalidArgument);
}

TEST(ServiceKey, ParsesAndPrintsLikeIpvsadmList) {
  EXPECT_EQ(ToString(Key("tcp", "10.0.0.1:80")), "TCP 10.0.0.1:80");
  EXPECT_EQ(ToString(Key("udp", "[2001:db8::1]:53")), "UDP [2001:db8::1]:53");
  const ServiceKey k = Key("udp", "10.0.0.1:53");
  EXPECT_EQ(k.proto, Proto::kUdp);
  EXPECT_EQ(k.port, 53);
  EXPECT_EQ(ToString(k.vip_port()), "10.0.0.1:53");
}

TEST(ServiceKey, RefusesMissingPortAndBadParts) {
  EXPECT_NE(ParseServiceKey("tcp", "10.0.0.1").status().message().find("has no port"),
            std::string::npos);
  EXPECT_FALSE(ParseServiceKey("icmp", "10.0.0.1:80").ok());
  EXPECT_FALSE(ParseServiceKey("tcp", "host:80").ok());
}

TEST(ServiceKey, SortsAsIpvsadmListsServices) {
  // ipvs_cmp_services: family, then protocol, then address, then port.
  const std::vector<ServiceKey> want = {
      Key("tcp", "10.0.0.1:80"),     Key("tcp", "10.0.0.1:443"), Key("tcp", "10.0.0.2:22"),
      Key("udp", "9.0.0.1:53"),      Key("udp", "10.0.0.1:53"),  Key("tcp", "[::1]:80"),
      Key("udp", "[2001:db8::]:53"),
  };
  std::vector<ServiceKey> got = want;
  std::reverse(got.begin(), got.end());
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, want);
}

TEST(ServiceKey, HashSeparatesProtocols) {
  EXPECT_EQ(ServiceKeyHash()(Key("tcp", "10.0.0.1:80")),
            ServiceKeyHash()(Key("tcp", "10.0.0.1:80")));
  EXPECT_NE(ServiceKeyHash()(Key("tcp", "10.0.0.1:80")),
            ServiceKeyHash()(Key("udp", "10.0.0.1:80")));
}

}  // namespace
}  // namespace vsc::vservice
