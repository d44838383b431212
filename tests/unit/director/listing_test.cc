#include "director/listing.h"

#include <gtest/gtest.h>

#include "director/admin_api.h"

namespace vsc::director {
namespace {

// Lines from shared/reference/ipvsadm_sample_output.txt: our rows must have the same layout.
TEST(ListingTest, RowsMatchIpvsadmLayout) {
  EXPECT_EQ(ServiceLine("TCP", "192.168.0.100:80", "wlc", 0, "255.255.255.255"),
            "TCP  192.168.0.100:80 wlc");
  EXPECT_EQ(ServiceLine("TCP", "192.168.0.100:443", "sh", 360, "255.255.255.0"),
            "TCP  192.168.0.100:443 sh persistent 360 mask 255.255.255.0");
  EXPECT_EQ(ServerLine("192.168.1.11:80", "Route", 3, 12, 40, ""),
            "  -> 192.168.1.11:80              Route   3      12         40        ");
  EXPECT_EQ(ServerLine("192.168.1.12:80", "Masq", 1, 4, 17, "ACTIVE"),
            "  -> 192.168.1.12:80              Masq    1      4          17         ACTIVE");
  EXPECT_EQ(NumbersLine("TCP", "192.168.0.100:80", 1234, 56789, 0, 3456789, 0),
            "TCP  192.168.0.100:80                 1234    56789        0  3456789        0");
  EXPECT_EQ(NumbersLine("->", "192.168.1.11:80", 617, 28400, 0, 1728000, 0),
            "  -> 192.168.1.11:80                   617    28400        0  1728000        0");
  EXPECT_EQ(NumbersLine("TCP", "192.168.0.100:80", 10, 100, 0, 10000, 0),
            "TCP  192.168.0.100:80                   10      100        0    10000        0");
}

TEST(ListingTest, RendersEveryServiceAndServer) {
  nlohmann::json status = nlohmann::json::parse(R"({
    "version": "vsc 0.1.0",
    "services": [{"protocol": "UDP", "address": "127.0.0.1:7000", "scheduler": "rr",
                  "persistence_timeout_s": 0, "persistence_netmask": "255.255.255.255",
                  "stats": {"conns": 5, "in_packets": 5, "out_packets": 0, "in_bytes": 300, "out_bytes": 0},
                  "rates": {"cps": 1, "in_pps": 1, "out_pps": 0, "in_bps": 60, "out_bps": 0},
                  "servers": [{"id": "rs1", "address": "127.0.0.1:7001", "forward": "Route",
                               "weight": 2, "active": 0, "inactive": 0, "state": "DRAINING",
                               "stats": {"conns": 5, "in_packets": 5, "out_packets": 0, "in_bytes": 300, "out_bytes": 0},
                               "rates": {"cps": 1, "in_pps": 1, "out_pps": 0, "in_bps": 60, "out_bps": 0}}]}]})");
  std::string table = RenderListing(status, ListingMode::kTable);
  EXPECT_NE(table.find("Prot LocalAddress:Port Scheduler Flags\n"), std::string::npos);
  EXPECT_NE(table.find("UDP  127.0.0.1:7000 rr\n"), std::string::npos);
  EXPECT_NE(
      table.find(
          "  -> 127.0.0.1:7001               Route   2      0          0          DRAINING\n"),
      std::string::npos);
  std::string stats = RenderListing(status, ListingMode::kStats);
  EXPECT_NE(stats.find("Conns   InPkts  OutPkts  InBytes OutBytes"), std::string::npos);
  EXPECT_NE(stats.find(NumbersLine("UDP", "127.0.0.1:7000", 5, 5, 0, 300, 0) + "\n"),
            std::string::npos);
  EXPECT_NE(stats.find(NumbersLine("->", "127.0.0.1:7001", 5, 5, 0, 300, 0) + "\n"),
            std::string::npos);
  std::string rate = RenderListing(status, ListingMode::kRate);
  EXPECT_NE(rate.find("CPS    InPPS   OutPPS    InBPS   OutBPS"), std::string::npos);
}

}  // namespace
}  // namespace vsc::director
