#include "vservice/check_config.h"

#include <gtest/gtest.h>

namespace vsc::vservice {
namespace {

using std::chrono::seconds;

std::string Error(const CheckConfig& c) { return Validate(c).message(); }

TEST(CheckConfig, KeepalivedDefaults) {
  const CheckConfig tcp = DefaultCheck(CheckType::kTcp);
  EXPECT_EQ(tcp.delay_loop, seconds(60));
  EXPECT_EQ(tcp.connect_timeout, seconds(5));
  EXPECT_EQ(tcp.retry, 1u);
  EXPECT_EQ(tcp.delay_before_retry, seconds(1));
  EXPECT_EQ(DefaultCheck(CheckType::kMisc).retry, 0u);
  EXPECT_EQ(DefaultCheck(CheckType::kHttpGet).delay_before_retry, seconds(3));
  EXPECT_TRUE(Validate(tcp).ok());
  EXPECT_TRUE(Validate(DefaultCheck(CheckType::kUdp)).ok());
}

TEST(CheckConfig, StaticDestinationsGetATcpCheckEverySecond) {
  const CheckConfig c = DefaultStaticCheck();
  EXPECT_EQ(c.type, CheckType::kTcp);
  EXPECT_EQ(c.delay_loop, seconds(1));
  EXPECT_EQ(c.connect_timeout, seconds(1));
  EXPECT_EQ(c.retry, 1u);
  EXPECT_TRUE(Validate(c).ok());
}

TEST(CheckConfig, ProbeTimeoutIsMiscTimeoutForMiscCheck) {
  EXPECT_EQ(ProbeTimeout(DefaultCheck(CheckType::kTcp)), seconds(5));
  CheckConfig misc = DefaultCheck(CheckType::kMisc);
  EXPECT_EQ(ProbeTimeout(misc), seconds(60));  // misc_timeout defaults to delay_loop
  misc.misc_timeout = seconds(7);
  EXPECT_EQ(ProbeTimeout(misc), seconds(7));
}

TEST(CheckConfig, WorstCaseDetectionTime) {
  // keepalived's TCP_CHECK defaults: 60 s to the next check, two 5 s timeouts, 1 s apart.
  EXPECT_EQ(WorstCaseDetectionTime(DefaultCheck(CheckType::kTcp)), seconds(60 + 2 * 5 + 1));
  CheckConfig c = DefaultCheck(CheckType::kHttpGet);
  c.delay_loop = seconds(10);
  c.connect_timeout = seconds(2);
  c.retry = 3;
  c.delay_before_retry = seconds(4);
  EXPECT_EQ(WorstCaseDetectionTime(c), seconds(10 + 4 * 2 + 3 * 4));
  CheckConfig misc = DefaultCheck(CheckType::kMisc);  // retry 0: one probe of misc_timeout
  misc.delay_loop = seconds(3);
  misc.misc_timeout = seconds(2);
  EXPECT_EQ(WorstCaseDetectionTime(misc), seconds(3 + 2));
}

TEST(CheckConfig, TypeNamesRoundTrip) {
  for (CheckType t : {CheckType::kTcp, CheckType::kHttpGet, CheckType::kUdp, CheckType::kMisc}) {
    EXPECT_EQ(*ParseCheckType(CheckTypeName(t)), t);
  }
  EXPECT_EQ(CheckTypeName(CheckType::kHttpGet), "HTTP_GET");
  EXPECT_FALSE(ParseCheckType("SSL_GET").ok());
}

TEST(CheckConfig, HttpGetNeedsAPathAndValidStatusAndDigest) {
  CheckConfig c = DefaultCheck(CheckType::kHttpGet);
  EXPECT_NE(Error(c).find("must start with '/'"), std::string::npos);
  c.path = "/health";
  EXPECT_TRUE(Validate(c).ok());
  c.status_min = 300;
  c.status_max = 200;
  EXPECT_NE(Error(c).find("status_code"), std::string::npos);
  c.status_min = 200;
  c.digest = "abc";
  EXPECT_NE(Error(c).find("32 hex digits"), std::string::npos);
  c.digest = "9e107d9d372bb6826bd81d3542a419d6";
  EXPECT_TRUE(Validate(c).ok());
}

TEST(CheckConfig, UdpPayloadsAreHex) {
  CheckConfig c = DefaultCheck(CheckType::kUdp);
  c.payload = "0a0b";
  c.expect = "0aXX";
  EXPECT_TRUE(Validate(c).ok());
  c.payload = "0g";
  EXPECT_NE(Error(c).find("payload"), std::string::npos);
  c.payload = "0a";
  c.expect = "0";  // odd length
  EXPECT_NE(Error(c).find("require_reply"), std::string::npos);
}

TEST(CheckConfig, MiscNeedsACommand) {
  CheckConfig c = DefaultCheck(CheckType::kMisc);
  EXPECT_NE(Error(c).find("misc_path"), std::string::npos);
  c.misc_path = "/bin/true";
  c.misc_timeout = seconds(0);
  EXPECT_NE(Error(c).find("misc_timeout"), std::string::npos);
  c.misc_timeout = seconds(2);
  c.misc_dynamic = true;
  EXPECT_TRUE(Validate(c).ok());
}

TEST(CheckConfig, FieldsOfAnotherTypeAreRefused) {
  CheckConfig c = DefaultCheck(CheckType::kTcp);
  c.path = "/";
  EXPECT_NE(Error(c).find("HTTP_GET options"), std::string::npos);
  c = DefaultCheck(CheckType::kHttpGet);
  c.path = "/";
  c.misc_dynamic = true;
  EXPECT_NE(Error(c).find("MISC_CHECK options"), std::string::npos);
  c = DefaultCheck(CheckType::kMisc);
  c.misc_path = "/bin/true";
  c.payload = "00";
  EXPECT_NE(Error(c).find("UDP_CHECK options"), std::string::npos);
}

TEST(CheckConfig, DurationsMustBePositive) {
  CheckConfig c = DefaultCheck(CheckType::kTcp);
  c.delay_loop = seconds(0);
  EXPECT_NE(Error(c).find("delay_loop"), std::string::npos);
  c = DefaultCheck(CheckType::kTcp);
  c.connect_timeout = seconds(-1);
  EXPECT_NE(Error(c).find("connect_timeout"), std::string::npos);
  c = DefaultCheck(CheckType::kTcp);
  c.delay_before_retry = seconds(-1);
  EXPECT_NE(Error(c).find("delay_before_retry"), std::string::npos);
}

}  // namespace
}  // namespace vsc::vservice
