// Multi-host test: proves the `dr` data path across hosts (fixture: netns_cluster.h). The client
// sends lookups to the director, the director forwards them and never sees a reply, and every
// answer reaches the client straight from a real server's own address. Then one real server is
// killed and lookups go on through the other.
#include <signal.h>

#include <map>
#include <string>

#include "netns/netns_cluster.h"

namespace vsc::netns {
namespace {

using namespace std::chrono_literals;

TEST_F(NetnsClusterTest, EveryLookupIsAnsweredDirectlyByARealServer) {
  constexpr int kRequests = 400;
  std::map<std::string, int> by_source;
  for (int i = 0; i < kRequests; ++i) {
    Answer a = Lookup(2s);
    ASSERT_TRUE(a.answered) << "request " << i << " got no answer within 2 s";
    ASSERT_EQ(a.problem, "") << "request " << i << " from " << a.from;
    ++by_source[a.from];
  }
  // Every answer came from a real server's own address, none from the director.
  int from_servers = 0;
  for (int i = 0; i < kServers; ++i) {
    const int n = by_source.count(ServerEndpoint(i)) ? by_source[ServerEndpoint(i)] : 0;
    // One client socket reaches one director worker (SO_REUSEPORT hashes the 4-tuple), whose rr
    // cursor alternates over the two ACTIVE servers; no request is resent (a missing answer
    // fails above), so each server answers half, within the one partial cycle.
    EXPECT_NEAR(n, kRequests / kServers, 1) << ServerEndpoint(i);
    from_servers += n;
  }
  EXPECT_EQ(from_servers, kRequests) << "some answers came from elsewhere (director?)";

  auto metrics = Metrics();
  ASSERT_TRUE(metrics.ok()) << metrics.status().ToString();
  EXPECT_EQ(Metric(*metrics, "vsc_datagrams_forwarded_total"), kRequests) << *metrics;
  EXPECT_EQ(Metric(*metrics, "vsc_replies_seen_total"), 0) << *metrics;
  for (int i = 0; i < kServers; ++i) {
    const std::string series =
        "vsc_server_requests_total{server=\"" + ServerHost(i) + "\",protocol=\"UDP\"}";
    EXPECT_EQ(Metric(*metrics, series), by_source[ServerEndpoint(i)]) << series << "\n" << *metrics;
  }
}

TEST_F(NetnsClusterTest, LookupsContinueThroughTheSurvivorWhenARealServerDies) {
  for (int i = 0; i < 20; ++i) ASSERT_TRUE(Lookup(2s).answered) << "warm-up request " << i;
  ASSERT_TRUE(servers_[0]->Signal(SIGKILL).ok());
  ASSERT_TRUE(servers_[0]->Wait(5s).has_value()) << "rs1 did not die";

  // Right after the crash: each lookup retried a few times must succeed, answered by rs2 — the
  // director has to stop sending to rs1 (its control session broke) while traffic flows.
  constexpr int kDuring = 100;
  int retries = 0;
  for (int i = 0; i < kDuring; ++i) {
    Answer a;
    for (int attempt = 0; attempt < 5 && !a.answered; ++attempt) {
      a = Lookup(300ms);
      if (!a.answered) ++retries;
    }
    ASSERT_TRUE(a.answered) << "request " << i << " after the crash: no answer in 5 tries";
    ASSERT_EQ(a.problem, "");
    EXPECT_EQ(a.from, ServerEndpoint(1));
  }
  std::string status;
  ASSERT_TRUE(WaitUntil(
      [&] {
        auto s = AdminGet("/v1/status");
        if (s.ok()) status = *s;
        return s.ok() && StateOf(*s, "rs1") == "DOWN";
      },
      10s))
      << "the director did not mark rs1 DOWN: " << status;
  EXPECT_EQ(StateOf(status, "rs2"), "ACTIVE");

  // Once rs1 is DOWN, nothing is lost at all and nothing more is sent to rs1.
  const std::string rs1_requests = "vsc_server_requests_total{server=\"rs1\",protocol=\"UDP\"}";
  auto before = Metrics();
  ASSERT_TRUE(before.ok()) << before.status().ToString();
  const std::optional<double> rs1_before = Metric(*before, rs1_requests);
  ASSERT_TRUE(rs1_before.has_value()) << *before;
  constexpr int kAfter = 200;
  for (int i = 0; i < kAfter; ++i) {
    Answer a = Lookup(2s);
    ASSERT_TRUE(a.answered) << "request " << i << " after rs1 went DOWN got no answer";
    ASSERT_EQ(a.problem, "");
    EXPECT_EQ(a.from, ServerEndpoint(1));
  }
  auto metrics = Metrics();
  ASSERT_TRUE(metrics.ok()) << metrics.status().ToString();
  // The gauge is 0 for any DOWN server by construction: what matters is that rs1's series says
  // DOWN, the survivor's says ACTIVE and up, the transition was counted, and rs1 got nothing.
  EXPECT_EQ(Metric(*metrics, "vsc_server_up{server=\"rs1\",state=\"DOWN\"}"), 0) << *metrics;
  EXPECT_EQ(Metric(*metrics, "vsc_server_up{server=\"rs2\",state=\"ACTIVE\"}"), 1) << *metrics;
  EXPECT_GE(
      Metric(*metrics, "vsc_membership_transitions_total{from=\"ACTIVE\",to=\"DOWN\"}").value_or(0),
      1)
      << *metrics;
  EXPECT_EQ(Metric(*metrics, rs1_requests), rs1_before) << "requests sent to rs1 while DOWN";
  EXPECT_EQ(Metric(*metrics, "vsc_replies_seen_total"), 0);
  std::printf("after the crash: %d of %d lookups needed a retry\n", retries, kDuring);
}

}  // namespace
}  // namespace vsc::netns
