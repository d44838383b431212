// The built-in lookup service on IPv6 (issue 12, "IPv4 and IPv6 alike"): a director whose
// `listen` is ::1 and real servers listening and registering on ::1 (their --director is
// "[::1]:PORT"). Lookups from an IPv6 client go through the director's `dr` path with the
// forward header's IPv6 form and are answered by the real servers themselves; no reply passes
// through the director. The client library reaches the same VIP over UDP and TCP.
#include "client/tcp_lookup_client.h"
#include "client/udp_lookup_client.h"
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
    EXPECT_EQ(st["services"][svc]["address"], "[::1]:" + std::to_string(cluster_->lookup_port()));
    EXPECT_EQ(st["services"][svc]["persistence_netmask"], "128");
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

  // The client library over IPv6: UDP (dr) and TCP (the built-in nat entry) to the VIP.
  const std::vector<uint64_t> ids = {1, 2, kRecords, kRecords + 1};
  auto udp = client::UdpLookupClient::Connect("::1", cluster_->lookup_port(), 2s, 1);
  ASSERT_TRUE(udp.ok()) << udp.status().ToString();
  auto by_udp = udp->Lookup(ids);
  ASSERT_TRUE(by_udp.ok()) << by_udp.status().ToString();
  EXPECT_TRUE(SharedOracle().Matches(ids, *by_udp));
  auto tcp = client::TcpLookupClient::Connect("[::1]", cluster_->lookup_port(), 2s);
  ASSERT_TRUE(tcp.ok()) << tcp.status().ToString();
  auto by_tcp = tcp->Lookup(ids);
  ASSERT_TRUE(by_tcp.ok()) << by_tcp.status().ToString();
  EXPECT_TRUE(SharedOracle().Matches(ids, *by_tcp));
  const json after = AdminStatus();
  uint64_t proxied = 0;
  for (int i = 0; i < kServers; ++i) proxied += ServerConns(after, 1, cluster_->server_id(i));
  EXPECT_EQ(proxied, 1u) << "the TCP lookup went through the nat entry to a real server";
}

}  // namespace
}  // namespace vsc::integration
