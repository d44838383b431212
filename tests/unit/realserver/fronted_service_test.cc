#include "realserver/fronted_service.h"

#include <gtest/gtest.h>

namespace vsc::realserver {
namespace {

TEST(FrontedServiceTest, ParsesNameProtocolAndAddress) {
  auto web = ParseFrontedService("web=tcp:10.0.0.5:80");
  ASSERT_TRUE(web.ok()) << web.status().ToString();
  EXPECT_EQ(*web, (FrontedService{"web", "tcp", "10.0.0.5", 80}));
  auto dns = ParseFrontedService("dns.1=udp:[2001:db8::1]:53");
  ASSERT_TRUE(dns.ok()) << dns.status().ToString();
  EXPECT_EQ(*dns, (FrontedService{"dns.1", "udp", "2001:db8::1", 53}));
  proto::Endpoint e = ToEndpoint(*web);
  EXPECT_EQ(e.service(), "web");
  EXPECT_EQ(e.host(), "10.0.0.5");
  EXPECT_EQ(e.port(), 80u);
  EXPECT_EQ(e.proto(), "tcp");
}

TEST(FrontedServiceTest, RefusesWhatTheDirectorCouldNotUseWithTheReason) {
  const std::pair<const char*, const char*> bad[] = {
      {"web", "no '='"},
      {"=tcp:1.2.3.4:80", "1-32 letters"},
      {"we b=tcp:1.2.3.4:80", "1-32 letters"},
      {"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa=tcp:1.2.3.4:80", "1-32 letters"},
      {"lookup-tcp=tcp:1.2.3.4:80", "vsc's own"},
      {"web=sctp:1.2.3.4:80", "not tcp or udp"},
      {"web=1.2.3.4", "no protocol"},
      {"web=tcp", "no protocol"},
      {"web=tcp:1.2.3.4", "needs a port"},
      {"web=tcp:1.2.3.4:0", "needs a port"},
      {"web=tcp:0.0.0.0:80", "not 0.0.0.0"},
      {"web=tcp:[::]:80", "not ::"},
      {"web=tcp:localhost:80", "localhost"},
  };
  for (const auto& [spec, why] : bad) {
    auto r = ParseFrontedService(spec);
    ASSERT_FALSE(r.ok()) << spec;
    EXPECT_NE(r.status().message().find(why), std::string::npos) << r.status().message();
    EXPECT_NE(r.status().message().find("NAME=tcp:HOST:PORT"), std::string::npos);
  }
}

TEST(FrontedServiceTest, ANameGivenTwiceIsRefused) {
  auto two = ParseFrontedServices({"a=tcp:1.2.3.4:80", "b=udp:1.2.3.4:80"});
  ASSERT_TRUE(two.ok());
  EXPECT_EQ(two->size(), 2u);
  auto dup = ParseFrontedServices({"a=tcp:1.2.3.4:80", "a=tcp:1.2.3.4:81"});
  ASSERT_FALSE(dup.ok());
  EXPECT_NE(dup.status().message().find("given twice"), std::string::npos);
}

}  // namespace
}  // namespace vsc::realserver
