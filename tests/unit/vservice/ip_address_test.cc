#include "vservice/ip_address.h"

#include <gtest/gtest.h>

#include <unordered_set>

#include "vservice/service_key.h"

namespace vsc::vservice {
namespace {

IpAddress Ip(std::string_view text) {
  auto a = IpAddress::Parse(text);
  EXPECT_TRUE(a.ok()) << text << ": " << a.status().ToString();
  return a.ok() ? *a : IpAddress();
}

TEST(IpAddress, ParsesAndPrintsBothFamilies) {
  EXPECT_EQ(Ip("10.0.0.1").v4(), 0x0A000001u);
  EXPECT_TRUE(Ip("10.0.0.1").is_v4());
  EXPECT_EQ(Ip("10.0.0.1").ToString(), "10.0.0.1");
  EXPECT_EQ(Ip("2001:db8::1").family(), Family::kV6);
  // inet_ntop's canonical text, which is what ipvsadm -n prints.
  EXPECT_EQ(Ip("2001:0db8:0000::0001").ToString(), "2001:db8::1");
  EXPECT_EQ(Ip("::1").ToString(), "::1");
  EXPECT_EQ(IpAddress::V4(0xC0A80101).ToString(), "192.168.1.1");
}

TEST(IpAddress, RefusesWhatIsNotANumericAddress) {
  for (std::string_view bad : {"", "localhost", "10.0.0", "10.0.0.256", "1.2.3.4.5", " 1.2.3.4",
                               "2001:db8:::1", "[::1]", "0x0a.0.0.1"}) {
    auto a = IpAddress::Parse(bad);
    EXPECT_EQ(a.status().code(), Code::kInvalidArgument) << bad;
  }
}

TEST(IpAddress, MaskedKeepsThePrefix) {
  EXPECT_EQ(Ip("10.1.2.3").Masked(24), Ip("10.1.2.0"));
  EXPECT_EQ(Ip("10.1.2.3").Masked(32), Ip("10.1.2.3"));
  EXPECT_EQ(Ip("10.1.2.3").Masked(0), Ip("0.0.0.0"));
  EXPECT_EQ(Ip("10.1.2.255").Masked(25), Ip("10.1.2.128"));
  EXPECT_EQ(Ip("2001:db8:1:2:3:4:5:6").Masked(64), Ip("2001:db8:1:2::"));
  EXPECT_EQ(Ip("2001:db8::ffff").Masked(121), Ip("2001:db8::ff80"));
  EXPECT_EQ(Ip("2001:db8::ffff").Masked(128), Ip("2001:db8::ffff"));
}

TEST(IpAddress, OrdersIpv4BeforeIpv6ThenByBytes) {
  EXPECT_LT(Ip("255.255.255.255"), Ip("::"));
  EXPECT_LT(Ip("9.255.255.255"), Ip("10.0.0.0"));
  EXPECT_LT(Ip("2001:db8::1"), Ip("2001:db8::2"));
  EXPECT_NE(Ip("0.0.0.1"), Ip("::1"));  // same low bytes, different families
}

TEST(AddrPort, ParsesIpvsadmForms) {
  auto v4 = ParseAddrPort("10.0.0.1:80");
  ASSERT_TRUE(v4.ok());
  EXPECT_EQ(v4->addr, Ip("10.0.0.1"));
  EXPECT_EQ(v4->port, 80);
  auto bare = ParseAddrPort("10.0.0.1");
  ASSERT_TRUE(bare.ok());
  EXPECT_FALSE(bare->port.has_value());
  auto v6 = ParseAddrPort("[2001:db8::1]:8080");
  ASSERT_TRUE(v6.ok());
  EXPECT_EQ(v6->addr, Ip("2001:db8::1"));
  EXPECT_EQ(v6->port, 8080);
  auto v6_bare = ParseAddrPort("2001:db8::1");  // ipvsadm tries IPv6 first: no port
  ASSERT_TRUE(v6_bare.ok());
  EXPECT_FALSE(v6_bare->port.has_value());
  EXPECT_EQ(ParseAddrPort("1.2.3.4:0")->port, 0);
  EXPECT_EQ(ParseAddrPort("1.2.3.4:65535")->port, 65535);
}

TEST(AddrPort, RefusesMalformedText) {
  for (std::string_view bad :
       {"1.2.3.4:", "1.2.3.4:65536", "1.2.3.4:http", "1.2.3.4:-1", "1.2.3.4:+80", "[2001:db8::1]",
        "[2001:db8::1]80", "[1.2.3.4]:80", "[::1:80", ":80", "80", "", "[]:80"}) {
    EXPECT_EQ(ParseAddrPort(bad).status().code(), Code::kInvalidArgument) << bad;
  }
}

TEST(AddrPort, PrintsAsIpvsadmDoes) {
  EXPECT_EQ(ToString(AddrPort{Ip("10.0.0.1"), 80}), "10.0.0.1:80");
  EXPECT_EQ(ToString(AddrPort{Ip("2001:db8::a0a0"), 80}), "[2001:db8::a0a0]:80");
  for (std::string_view text : {"10.0.0.1:80", "[2001:db8::1]:53", "[::]:0", "0.0.0.0:65535"}) {
    auto p = ParseAddrPort(text);
    ASSERT_TRUE(p.ok()) << text;
    EXPECT_EQ(ToString(AddrPort{p->addr, *p->port}), text);
  }
}

TEST(Netmask, Ipv4IsADottedContiguousMask) {
  EXPECT_EQ(*ParseNetmask("255.255.255.0", Family::kV4), 24);
  EXPECT_EQ(*ParseNetmask("255.255.255.255", Family::kV4), 32);
  EXPECT_EQ(*ParseNetmask("0.0.0.0", Family::kV4), 0);
  EXPECT_EQ(*ParseNetmask("255.255.128.0", Family::kV4), 17);
  EXPECT_FALSE(ParseNetmask("255.0.255.0", Family::kV4).ok());
  EXPECT_FALSE(ParseNetmask("24", Family::kV4).ok());
  EXPECT_FALSE(ParseNetmask("ffff::", Family::kV4).ok());
  for (int p = 0; p <= 32; ++p) {
    EXPECT_EQ(*ParseNetmask(FormatNetmask(p, Family::kV4), Family::kV4), p);
  }
  EXPECT_EQ(FormatNetmask(24, Family::kV4), "255.255.255.0");
}

TEST(Netmask, Ipv6IsAPrefixLength) {
  EXPECT_EQ(*ParseNetmask("64", Family::kV6), 64);
  EXPECT_EQ(*ParseNetmask("128", Family::kV6), 128);
  EXPECT_FALSE(ParseNetmask("0", Family::kV6).ok());  // ipvsadm: 1..128
  EXPECT_FALSE(ParseNetmask("129", Family::kV6).ok());
  EXPECT_FALSE(ParseNetmask("255.255.255.0", Family::kV6).ok());
  EXPECT_EQ(FormatNetmask(64, Family::kV6), "64");
}

TEST(ParseDecimal, DigitsOnlyWithinRange) {
  EXPECT_EQ(ParseDecimal("0", 5), 0u);
  EXPECT_EQ(ParseDecimal("5", 5), 5u);
  EXPECT_FALSE(ParseDecimal("6", 5));
  EXPECT_FALSE(ParseDecimal("", 5));
  EXPECT_FALSE(ParseDecimal("1x", 5));
  EXPECT_FALSE(ParseDecimal("-1", 5));
  EXPECT_FALSE(ParseDecimal("99999999999999999999999", UINT64_MAX));
}

TEST(Hashes, EqualValuesHashEqualAndNearbyOnesSpread) {
  std::unordered_set<size_t> seen;
  for (uint32_t i = 0; i < 1000; ++i) {
    const AddrPort ap{IpAddress::V4(0x0A000000 + i), 80};
    EXPECT_EQ(AddrPortHash()(ap), AddrPortHash()(AddrPort{IpAddress::V4(0x0A000000 + i), 80}));
    seen.insert(AddrPortHash()(ap));
  }
  EXPECT_EQ(seen.size(), 1000u);
  EXPECT_NE(IpAddressHash()(Ip("0.0.0.1")), IpAddressHash()(Ip("::1")));
}

}  // namespace
}  // namespace vsc::vservice
