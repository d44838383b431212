// Multi-host test of the Chord ring (issue 9, seed 002; fixture: netns_cluster.h): the client
// and the ring nodes on different hosts. A client in prefetch mode gets the route table from
// the director once and then publishes, subscribes and fetches straight at each group's owner,
// at that node's own address: the director's ring counters show no relay traffic (no
// via-director request, no owner question). The same client in via-director mode does move
// that counter, by exactly its publishes.
#include <map>
#include <string>

#include "client/ring_client.h"
#include "client/ring_subscription.h"
#include "netns/netns_cluster.h"

namespace vsc::netns {
namespace {

using namespace std::chrono_literals;
using client::RingClient;
using client::RingMode;

constexpr int kPublishes = 40;
constexpr int kGroups = 8;

std::vector<uint8_t> Clip(int n) {
  const std::string text = "netns clip " + std::to_string(n);
  return std::vector<uint8_t>(text.begin(), text.end());
}

// What the client saw, from inside its namespace.
struct ClientRun {
  std::string error;
  std::map<std::string, int> acks_by_node;  // "host:port" the ack came from
  int acks_not_at_owner = 0;                // sent elsewhere than the table's owner
  int hops = 0;
  size_t heard = 0;    // clips of group 0 the subscriber received
  size_t fetched = 0;  // clips of group 1 in a fetch
};

class NetnsRingTest : public NetnsClusterTest {
 protected:
  client::RingClientOptions Options(RingMode mode) const {
    client::RingClientOptions o;
    o.director_host = topo_->Address("director");
    o.ring_port = ring_port_;
    o.mode = mode;
    o.timeout = 2s;
    return o;
  }
  double DirectorRing(const std::string& kind) {
    auto m = Metrics();
    return m.ok()
               ? Metric(*m, "vsc_director_ring_requests_total{kind=\"" + kind + "\"}").value_or(-1)
               : -1;
  }
  // One series of a node's /metrics, read inside its namespace (-1 when unreadable).
  double NodeMetric(int i, const std::string& series) {
    Result<net::HttpResponse> r = Unavailable("not run");
    (void)topo_->RunIn(ServerHost(i), [&] {
      r = net::HttpRequestSync(topo_->Address(ServerHost(i)), http_ports_[i], "GET", "/metrics", "",
                               {}, 5s);
    });
    if (!r.ok() || r->status != 200) return -1;
    return Metric(r->body, series).value_or(-1);
  }
  double NodePublishes(int i) { return NodeMetric(i, "vsc_rs_relay_total{event=\"publish\"}"); }
  // The director's ring has both nodes and each node routes with that version.
  bool RingSettled() {
    auto m = Metrics();
    if (!m.ok() || Metric(*m, "vsc_director_ring_members") != kServers) return false;
    const double version = Metric(*m, "vsc_director_ring_version").value_or(-1);
    for (int i = 0; i < kServers; ++i) {
      if (NodeMetric(i, "vsc_rs_ring_version") != version) return false;
    }
    return true;
  }
  // Publishes kPublishes clips over kGroups groups, subscribes to group 0 and fetches group 1.
  ClientRun RunPrefetchClient() {
    ClientRun run;
    RealClock clock;
    RingClient c(Options(RingMode::kPrefetch), clock);
    auto table = c.RefreshTable();
    if (!table.ok()) {
      run.error = table.status().ToString();
      return run;
    }
    RingClient lc(Options(RingMode::kPrefetch), clock);
    client::RingSubscription sub(lc, "netns-0", 0);
    for (int n = 0; n < kPublishes; ++n) {
      const std::string group = "netns-" + std::to_string(n % kGroups);
      auto ack = c.Publish(group, Clip(n));
      if (!ack.ok()) {
        run.error = ack.status().ToString();
        return run;
      }
      const ring::Member& owner = (*table)->Owner(group);
      run.acks_not_at_owner +=
          ack->node != owner.endpoint.host + ":" + std::to_string(owner.endpoint.port);
      ++run.acks_by_node[ack->node];
      run.hops += ack->hops;
    }
    const TimePoint deadline = clock.Now() + 5s;
    while (run.heard < kPublishes / kGroups && clock.Now() < deadline) {
      auto clip = sub.Next(deadline);
      if (!clip.ok()) {
        run.error = clip.status().ToString();
        return run;
      }
      run.heard += clip->has_value();
    }
    auto fetched = c.Fetch("netns-1", 0);
    if (!fetched.ok()) run.error = fetched.status().ToString();
    run.fetched = fetched.ok() ? fetched->clips.size() : 0;
    return run;
  }
};

TEST_F(NetnsRingTest, PrefetchClientsTalkToTheNodesDirectlyNotThroughTheDirector) {
  ASSERT_TRUE(WaitUntil([&] { return RingSettled(); }, 10s))
      << "the ring did not reach both nodes, or they do not route with the director's version";
  const double via_before = DirectorRing("via_director");
  const double owner_before = DirectorRing("owner");
  const double tables_before = DirectorRing("table");
  ClientRun run;
  ASSERT_TRUE(topo_->RunIn("client", [&] { run = RunPrefetchClient(); }).ok());
  ASSERT_EQ(run.error, "");
  // Every publish acked by its owner, at its own address in its own namespace, in one hop.
  EXPECT_EQ(run.acks_not_at_owner, 0);
  EXPECT_EQ(run.hops, 0);
  for (int i = 0; i < kServers; ++i) {
    const std::string at = topo_->Address(ServerHost(i)) + ":" + std::to_string(relay_ports_[i]);
    EXPECT_GT(run.acks_by_node[at], 0) << "no publish went to " << at;
    run.acks_by_node.erase(at);
  }
  EXPECT_TRUE(run.acks_by_node.empty())
      << "acks from elsewhere: " << run.acks_by_node.begin()->first;
  EXPECT_EQ(NodePublishes(0) + NodePublishes(1), kPublishes);
  EXPECT_EQ(run.heard, static_cast<size_t>(kPublishes / kGroups));
  EXPECT_EQ(run.fetched, static_cast<size_t>(kPublishes / kGroups));
  // The director gave out the table (once per client) and carried nothing else.
  EXPECT_EQ(DirectorRing("via_director"), via_before);
  EXPECT_EQ(DirectorRing("owner"), owner_before);
  EXPECT_LE(DirectorRing("table"), tables_before + 2);

  // The same from the same host through the director: the counter moves by every publish.
  std::string via_error;
  int via_acks_at_director = 0;
  ASSERT_TRUE(topo_
                  ->RunIn("client",
                          [&] {
                            RealClock clock;
                            RingClient v(Options(RingMode::kViaDirector), clock);
                            for (int n = 0; n < 10; ++n) {
                              auto ack = v.Publish("netns-via", Clip(n));
                              if (!ack.ok()) {
                                via_error = ack.status().ToString();
                                return;
                              }
                              via_acks_at_director +=
                                  ack->node == client::DirectorRingAddress(v.options());
                            }
                          })
                  .ok());
  ASSERT_EQ(via_error, "");
  EXPECT_EQ(via_acks_at_director, 10);
  EXPECT_EQ(DirectorRing("via_director"), via_before + 10);
  EXPECT_EQ(NodePublishes(0) + NodePublishes(1), kPublishes + 10);
}

}  // namespace
}  // namespace vsc::netns
