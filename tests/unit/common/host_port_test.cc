#include "common/host_port.h"

#include <gtest/gtest.h>

namespace vsc {
namespace {

TEST(HostPortTest, BracketsABareIpv6AddressOnly) {
  EXPECT_EQ(HostPort("127.0.0.1", 7000), "127.0.0.1:7000");
  EXPECT_EQ(HostPort("db.example", 80), "db.example:80");
  EXPECT_EQ(HostPort("::1", 7000), "[::1]:7000");
  EXPECT_EQ(HostPort("[fd00::7]", 53), "[fd00::7]:53");
}

}  // namespace
}  // namespace vsc
