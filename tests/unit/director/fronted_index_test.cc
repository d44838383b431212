// A static destination that a live agent fronts (`vsc realserver --service`): the index that
// matches it, and the view it gets (the agent's membership and load on top of its check).
#include "director/fronted_index.h"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "director/service_view_builder.h"
#include "sched/backend.h"

namespace vsc::director {
namespace {

using membership::Endpoint;
using membership::ServerRecord;
using membership::State;
using vservice::AddrPort;
using vservice::IpAddress;
using vservice::Proto;

ServerRecord Server(std::string id, State state, std::vector<Endpoint> endpoints) {
  ServerRecord r;
  r.reg.id = std::move(id);
  r.reg.endpoints = std::move(endpoints);
  r.state = state;
  return r;
}

AddrPort At(const char* ip, uint16_t port) { return {*IpAddress::Parse(ip), port}; }

TEST(FrontedIndex, HoldsTheFrontedEndpointsOfLiveServersByProtocolAndAddress) {
  std::vector<ServerRecord> servers = {
      Server("rs1", State::kActive,
             {{"lookup-udp", "127.0.0.1", 7001, ""},
              {"web", "127.0.0.1", 8080, "tcp"},
              {"dns", "127.0.0.1", 5353, "udp"}}),
      Server("rs2", State::kDraining, {{"web", "::1", 8080, "tcp"}}),
      Server("rs3", State::kDown, {{"web", "127.0.0.3", 8080, "tcp"}}),
      Server("rs4", State::kActive, {{"web", "127.0.0.1", 8080, "tcp"}}),
      Server("rs5", State::kActive, {{"odd", "not-an-address", 1, "tcp"}}),
  };
  FrontedIndex index = BuildFrontedIndex(servers);
  EXPECT_EQ(index.size(), 3u);
  EXPECT_EQ(index.at({Proto::kTcp, At("127.0.0.1", 8080)}), "rs1");  // first by id wins
  EXPECT_EQ(index.at({Proto::kUdp, At("127.0.0.1", 5353)}), "rs1");
  EXPECT_EQ(index.at({Proto::kTcp, At("::1", 8080)}), "rs2");          // draining still fronts it
  EXPECT_FALSE(index.contains({Proto::kUdp, At("127.0.0.1", 8080)}));  // by protocol
  EXPECT_FALSE(index.contains({Proto::kUdp, At("127.0.0.1", 7001)}));  // vsc's own endpoint
  EXPECT_FALSE(index.contains({Proto::kTcp, At("127.0.0.3", 8080)}));  // DOWN fronts nothing
}

TEST(FrontedIndex, AFrontedStaticDestinationFollowsItsCheckAndTheAgent) {
  vservice::VirtualService vs;
  vs.key = vservice::ServiceKey{Proto::kTcp, *IpAddress::Parse("10.0.0.254"), 80};
  for (uint16_t port = 8081; port <= 8085; ++port) {
    vservice::DestConfig c;
    c.weight = 4;
    vs.dests[At("127.0.0.1", port)] = c;
  }
  ServerRecord active = Server("rs1", State::kActive, {});
  active.weight = 1;
  active.load.run_queue = 3;
  active.load.response_ms = 25;
  ServerRecord drained = Server("rs2", State::kDraining, {});
  drained.weight = 0;
  ServerRecord busy = Server("rs3", State::kBusy, {});
  busy.weight = 1;
  std::vector<DestInputs> in(5);
  for (auto& i : in) i.stats = std::make_shared<DestStats>();
  in[0].agent = &active;
  in[1].agent = &drained;
  in[2].agent = &busy;
  in[3].agent = &active;
  in[3].check_up = false;  // the service behind a live agent is down
  // in[4]: no agent fronts it: a plain static destination
  auto view = BuildServiceView(vs, in, 1);
  const auto& d = view->dests;
  EXPECT_TRUE(sched::CanTakeNewWork(d[0].backend));
  EXPECT_EQ(d[0].server_id, "rs1");
  EXPECT_EQ(d[0].state, "ACTIVE");
  EXPECT_EQ(d[0].backend.weight, 4u);
  EXPECT_EQ(d[0].backend.run_queue, 3);
  EXPECT_EQ(d[0].backend.response_ms, 25);
  EXPECT_EQ(d[1].backend.weight, 0u);  // drained: quiescent
  EXPECT_FALSE(sched::CanTakeNewWork(d[1].backend));
  EXPECT_FALSE(d[2].backend.available);  // BUSY takes no new work
  EXPECT_EQ(d[2].state, "BUSY");
  EXPECT_FALSE(d[3].backend.available);
  EXPECT_EQ(d[3].state, "ACTIVE, check DOWN");
  EXPECT_TRUE(sched::CanTakeNewWork(d[4].backend));
  EXPECT_EQ(d[4].state, "UP");
  EXPECT_EQ(d[4].server_id, "");
}

}  // namespace
}  // namespace vsc::director
