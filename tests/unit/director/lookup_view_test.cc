// BuildLookupView: the built-in lookup entries take their configuration from the table and
// their destinations, with the control plane's verdict on each, from the cluster view.
#include "director/lookup_view.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>

namespace vsc::director {
namespace {

ViewServer Server(const std::string& id, uint16_t port, uint32_t weight, bool available) {
  ViewServer s;
  s.id = id;
  s.address = {vservice::IpAddress::V4(0x7f000001), port};
  s.backend.weight = weight;
  s.backend.available = available;
  s.backend.run_queue = 2.5;
  return s;
}

TEST(LookupViewTest, DestinationsAreTheCandidatesWithTheTablesConfiguration) {
  vservice::VirtualServiceTable table;
  const vservice::ServiceKey key{vservice::Proto::kUdp, vservice::IpAddress::V4(0x7f000001), 7000};
  vservice::ServiceConfig config;
  config.scheduler = "sh";
  config.persistence = vservice::Persistence{60, 24};
  ASSERT_TRUE(table.AddService(key, config).ok());
  const std::vector<ViewServer> candidates = {
      Server("rs1", 7001, 3, true), Server("rs2", 7002, 0, true), Server("rs3", 7003, 1, false)};
  std::vector<LookupDestInputs> inputs;
  for (const char* state : {"ACTIVE", "ACTIVE", "DOWN"}) {
    inputs.push_back({state, std::make_shared<DestStats>()});
  }
  auto view = BuildLookupView(*table.Find(key), candidates, inputs, 9);
  EXPECT_EQ(view->version, 9u);
  EXPECT_EQ(view->key, key);
  EXPECT_EQ(view->config, config);
  ASSERT_EQ(view->dests.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    const DestView& d = view->dests[i];
    EXPECT_EQ(d.server_id, candidates[i].id);
    EXPECT_EQ(d.dest.addr.v4(), 0x7f000001u);
    EXPECT_EQ(d.dest.port, 7001 + i);
    EXPECT_EQ(d.method, vservice::Method::kDr);
    EXPECT_EQ(d.backend.weight, candidates[i].backend.weight);
    EXPECT_EQ(d.backend.available, candidates[i].backend.available);
    EXPECT_DOUBLE_EQ(d.backend.run_queue, 2.5);
    EXPECT_EQ(d.stats, inputs[i].stats);
  }
  EXPECT_EQ(view->dests[0].state, "ACTIVE");
  EXPECT_EQ(view->dests[1].state, "QUIESCENT");  // weight 0: no new work, flows go on
  EXPECT_EQ(view->dests[2].state, "DOWN");

  const vservice::ServiceKey tcp{vservice::Proto::kTcp, key.vip, 7000};
  ASSERT_TRUE(table.AddService(tcp, {}).ok());
  auto tview = BuildLookupView(*table.Find(tcp), candidates, inputs, 10);
  EXPECT_EQ(tview->dests[0].method, vservice::Method::kNat);
  EXPECT_EQ(LookupServiceIndex(vservice::Proto::kTcp), kTcpService);
  EXPECT_EQ(LookupServiceIndex(vservice::Proto::kUdp), kUdpService);
}

}  // namespace
}  // namespace vsc::director
