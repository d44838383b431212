// The built-in lookup service on IPv6 (issue 12, "IPv4 and IPv6 alike"): a director whose
// `listen` is ::1 and real servers listening and registering on ::1 (their --director is
// "[::1]:PORT"). Lookups from an IPv6 client go through the director's `dr` path with the
// forward header's IPv6 form and are answered by the real servers themselves; no reply passes
// through the director.
#include "integration/cluster_harness.h"

namespace vsc::integration {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

TEST_F(ClusterTest, AnIpv6ClusterServesDrLookupsStraightFromItsRealServers) {
  ASSERT_NO_FATAL_FAILURE(StartCluster([](bench::LocalClusterOptions& o) { o.host = "::1"; }));
  const json st = AdminStatus();
  ASSERT_EQ(st.at("services").size(), 2u);
  for (int svc = 0; svc < 2; ++svc) {
    for (int i = 0; i < kServers; ++i) {
      const json* s = FindServer(st, svc, cluster_->server_id(i));
      ASSERT_NE(s, nullptr) << cluster_->server_id(i) << " not listed in service " << svc;
      EXPECT_EQ((*s)["state"], "ACTIVE");
      EXPECT_EQ((*s)["address"], "[::1]:" + std::to_string(cluster_->server_lookup_port(i)));
    }
  }
  // Heartbeats arrive over IPv6: five periods' worth from every server, and nobody turned
  // SILENT meanwhile (two missed periods would have).
  ASSERT_TRUE(test_support::WaitUntil(
      [&] { return Metric("vsc_heartbeats_received_total") >= 5 * kServers; }, 5s));
  constexpr int kRequests = 90;
  std::vector<int> per_server = UdpRoundTrips(kRequests, 6);
  for (int i = 0; i < kServers; ++i) {
    EXPECT_EQ(per_server[i], kRequests / kServers) << cluster_->server_id(i) << " (rr)";
  }
  EXPECT_EQ(Metric("vsc_datagrams_forwarded_total"), kRequests);
  EXPECT_EQ(Metric("vsc_replies_seen_total"), 0) << "dr: the real servers answer the client";
  EXPECT_EQ(Transitions("ACTIVE", "SILENT"), 0);
}

}  // namespace
}  // namespace vsc::integration
