#include "director/service_view_builder.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <vector>

#include "director/dest_picker.h"
#include "director/flow_expiry.h"
#include "director/sched_table_share.h"
#include "director/shared_persistence.h"

namespace vsc::director {
namespace {

using vservice::AddrPort;
using vservice::DestConfig;
using vservice::IpAddress;
using vservice::ServiceKey;
using vservice::VirtualService;

AddrPort Dest(uint8_t last) { return {IpAddress::V4(0x0a000000u | last), 80}; }

VirtualService Service(size_t dests, uint32_t weight = 1) {
  VirtualService vs;
  vs.key = ServiceKey{vservice::Proto::kTcp, IpAddress::V4(0x0a0000fe), 80};
  for (size_t i = 0; i < dests; ++i) {
    DestConfig c;
    c.weight = weight;
    vs.dests[Dest(static_cast<uint8_t>(i + 1))] = c;
  }
  return vs;
}

// `view` with the persistence table the engine shares between the views of a service
// (ServiceEngine::ShareSyncedState): `table`, made for `vs` when still empty.
ServiceViewPtr WithTable(const VirtualService& vs, std::shared_ptr<ServiceView> view,
                         std::shared_ptr<SharedPersistence>& table, bool expire_quiescent = false) {
  if (!table) {
    table = MakeSharedPersistence(vs.key.vip.family(), *vs.config.persistence, expire_quiescent);
  }
  view->persistence = table;
  return view;
}

// `vs` under rr with persistence: 60 s, clients grouped by `prefix_len` (-M).
VirtualService PersistentRr(VirtualService vs, int prefix_len) {
  vs.config.scheduler = "rr";
  vs.config.persistence = vservice::Persistence{60, prefix_len};
  return vs;
}

std::vector<DestInputs> Inputs(size_t n) {
  std::vector<DestInputs> in(n);
  for (auto& i : in) i.stats = std::make_shared<DestStats>();
  return in;
}

TEST(ServiceViewBuilder, StaticDestinationFollowsItsCheckAndPassiveMark) {
  VirtualService vs = Service(3);
  auto in = Inputs(3);
  in[1].check_up = false;
  in[2].passive_down = true;
  auto view = BuildServiceView(vs, in, 7);
  ASSERT_EQ(view->dests.size(), 3u);
  EXPECT_EQ(view->version, 7u);
  EXPECT_TRUE(sched::CanTakeNewWork(view->dests[0].backend));
  EXPECT_EQ(view->dests[0].state, "UP");
  EXPECT_FALSE(view->dests[1].backend.available);
  EXPECT_EQ(view->dests[1].state, "DOWN");
  EXPECT_EQ(view->dests[1].backend.weight, 1u);  // removed from the pool, weight kept
  EXPECT_FALSE(view->dests[2].backend.available);
  EXPECT_EQ(view->dests[2].state, "FAILING");
  EXPECT_EQ(view->dests[0].stats, in[0].stats);
}

TEST(ServiceViewBuilder, InhibitOnFailureWeightZeroQuiescentAndMiscDynamic) {
  VirtualService vs = Service(3);
  auto it = vs.dests.begin();
  it->second.check = vservice::DefaultStaticCheck();
  it->second.check->inhibit_on_failure = true;
  (++it)->second.weight = 0;
  auto in = Inputs(3);
  in[0].check_up = false;
  in[2].check_weight = 9;
  auto view = BuildServiceView(vs, in, 1);
  EXPECT_EQ(view->dests[0].backend.weight, 0u);
  EXPECT_FALSE(view->dests[0].backend.available);
  EXPECT_TRUE(view->dests[1].backend.available);
  EXPECT_EQ(view->dests[1].state, "QUIESCENT");
  EXPECT_FALSE(sched::CanTakeNewWork(view->dests[1].backend));
  EXPECT_EQ(view->dests[2].backend.weight, 9u);
}

TEST(ServiceViewBuilder, AgentDestinationFollowsMembershipAndLoad) {
  VirtualService vs = Service(4, 3);
  for (auto& [addr, cfg] : vs.dests) cfg.agent_id = "rs" + std::to_string(addr.addr.v4() & 0xff);
  membership::ServerRecord active, drained, silent;
  active.state = membership::State::kActive;
  active.weight = 1;
  active.load.run_queue = 2.5;
  active.load.response_ms = 40;
  drained.state = membership::State::kDraining;
  drained.weight = 0;
  silent.state = membership::State::kSilent;
  auto in = Inputs(4);
  in[0].agent = &active;
  in[1].agent = &drained;
  in[2].agent = &silent;  // in[3]: not registered
  auto view = BuildServiceView(vs, in, 1);
  EXPECT_TRUE(sched::CanTakeNewWork(view->dests[0].backend));
  EXPECT_EQ(view->dests[0].backend.weight, 3u);  // the destination's weight, not the agent's
  EXPECT_EQ(view->dests[0].backend.run_queue, 2.5);
  EXPECT_EQ(view->dests[0].backend.response_ms, 40);
  EXPECT_EQ(view->dests[0].state, "ACTIVE");
  EXPECT_EQ(view->dests[0].server_id, "rs1");
  EXPECT_EQ(view->dests[1].backend.weight, 0u);
  EXPECT_FALSE(sched::CanTakeNewWork(view->dests[1].backend));
  EXPECT_FALSE(view->dests[2].backend.available);
  EXPECT_EQ(view->dests[2].state, "SILENT");
  EXPECT_FALSE(view->dests[3].backend.available);
  EXPECT_EQ(view->dests[3].state, "UNREGISTERED");
}

// dwlc's T: the check's measurement for a static destination (also one an agent fronts, once
// measured), the heartbeat's for an agent's own endpoint.
TEST(ServiceViewBuilder, ResponseTimeComesFromTheCheckUnlessTheDestinationIsAnAgents) {
  VirtualService vs = Service(4, 1);
  membership::ServerRecord agent;
  agent.state = membership::State::kActive;
  agent.weight = 1;
  agent.load.response_ms = 5;
  auto in = Inputs(4);
  for (auto& i : in) i.check_response_ms = 120;
  auto it = vs.dests.begin();
  it->second.agent_id = "rs1";  // dests[0]: the agent's own endpoint
  in[0].agent = &agent;
  in[1].agent = &agent;  // dests[1]: a static destination the agent fronts, check measured
  in[2].agent = &agent;  // dests[2]: fronted, not measured yet
  in[2].check_response_ms = 0;
  auto view = BuildServiceView(vs, in, 1);  // dests[3]: static, no agent
  EXPECT_EQ(view->dests[0].backend.response_ms, 5);
  EXPECT_EQ(view->dests[1].backend.response_ms, 120);
  EXPECT_EQ(view->dests[2].backend.response_ms, 5);
  EXPECT_EQ(view->dests[3].backend.response_ms, 120);
}

TEST(ServiceViewBuilder, EffectiveCheck) {
  const auto tcp = vservice::Proto::kTcp, udp = vservice::Proto::kUdp;
  DestConfig st;
  ASSERT_TRUE(EffectiveCheck(tcp, st).has_value());
  EXPECT_EQ(*EffectiveCheck(tcp, st), vservice::DefaultStaticCheck());
  ASSERT_TRUE(EffectiveCheck(udp, st).has_value());
  EXPECT_EQ(EffectiveCheck(udp, st)->type, vservice::CheckType::kUdp);
  EXPECT_EQ(EffectiveCheck(udp, st)->delay_loop, std::chrono::seconds(1));
  EXPECT_TRUE(vservice::Validate(*EffectiveCheck(udp, st)).ok());
  DestConfig agent;
  agent.agent_id = "rs1";
  EXPECT_FALSE(EffectiveCheck(tcp, agent).has_value());
  agent.check = vservice::DefaultCheck(vservice::CheckType::kHttpGet);
  EXPECT_EQ(EffectiveCheck(tcp, agent), agent.check);
}

// Two workers share one view: wlc sees the connections the other worker opened.
TEST(DestPicker, ConnectionCountsAreClusterWide) {
  VirtualService vs = Service(5);
  auto view = std::shared_ptr<const ServiceView>(BuildServiceView(vs, Inputs(5), 1));
  DestPicker w1({}), w2({});
  w1.OnView(view);
  w2.OnView(view);
  const AddrPort client{IpAddress::V4(0xc0a80001), 1000};
  for (int i = 0; i < 5; ++i) {
    DestPicker& w = i % 2 ? w2 : w1;
    auto pick = w.Pick(client, TimePoint{});
    ASSERT_TRUE(pick.has_value());
    Bump(view->dests[*pick].stats->active);  // the connection stays open
  }
  for (const DestView& d : view->dests) EXPECT_EQ(Read(d.stats->active), 1u);
}

TEST(DestPicker, UpperThresholdAndTriedDestinationsAreSkipped) {
  VirtualService vs = Service(2);
  vs.dests.begin()->second.u_threshold = 1;
  auto view = std::shared_ptr<const ServiceView>(BuildServiceView(vs, Inputs(2), 1));
  DestPicker p({});
  p.OnView(view);
  const AddrPort client{IpAddress::V4(0xc0a80001), 1000};
  Bump(view->dests[0].stats->active);  // dest 0 at its threshold
  for (int i = 0; i < 10; ++i) EXPECT_EQ(p.Pick(client, TimePoint{}), 1u);
  const bool tried[] = {false, true};
  EXPECT_EQ(p.Pick(client, TimePoint{}, tried), std::nullopt);
  Drop(view->dests[0].stats->active);
  EXPECT_EQ(p.Pick(client, TimePoint{}, tried), 0u);
}

TEST(DestPicker, PersistenceKeepsAClientOnItsDestination) {
  VirtualService vs = Service(4);
  vs.config.scheduler = "rr";
  vs.config.persistence = vservice::Persistence{60, 24};
  std::shared_ptr<SharedPersistence> table;
  auto view = WithTable(vs, BuildServiceView(vs, Inputs(4), 1), table);
  DestPicker p({});
  p.OnView(view);
  const TimePoint t0{};
  auto first = p.Pick({IpAddress::V4(0xc0a80001), 1}, t0);
  for (uint16_t port = 2; port < 20; ++port) {
    // Same /24: the same destination, although rr would move on.
    EXPECT_EQ(p.Pick({IpAddress::V4(0xc0a80002), port}, t0), first);
  }
}

// ipvsadm -p -M 64 on an IPv6 service: the persistence template covers the client's /64, so
// two clients inside it go to one destination; a client of the next /64 is scheduled anew (rr
// moves on), and so is every address at -M 128.
TEST(DestPicker, Ipv6PersistenceKeysOnThePrefixLength) {
  auto v6 = [](const char* text, uint16_t port) { return AddrPort{*IpAddress::Parse(text), port}; };
  for (int prefix : {64, 128}) {
    SCOPED_TRACE(prefix);
    VirtualService vs;
    vs.key = ServiceKey{vservice::Proto::kTcp, *IpAddress::Parse("2001:db8::80"), 80};
    vs.config.scheduler = "rr";
    vs.config.persistence = vservice::Persistence{60, prefix};
    for (const char* d : {"2001:db8::a", "2001:db8::b", "2001:db8::c"}) vs.dests[v6(d, 80)] = {};
    std::shared_ptr<SharedPersistence> table;
    auto view = WithTable(vs, BuildServiceView(vs, Inputs(3), 1), table);
    DestPicker p({});
    p.OnView(view);
    const TimePoint t0{};
    const auto first = p.Pick(v6("2001:db8:1:2::1", 1000), t0);
    ASSERT_TRUE(first.has_value());
    const auto same_net = p.Pick(v6("2001:db8:1:2:ffff:ffff:ffff:fffe", 2000), t0);
    const auto next_net = p.Pick(v6("2001:db8:1:3::1", 1000), t0);
    ASSERT_TRUE(same_net && next_net);
    if (prefix == 64) {
      EXPECT_EQ(*same_net, *first) << "a client of the same /64 left the template's destination";
    } else {
      EXPECT_NE(*same_net, *first) << "at -M 128 another address is another client";
    }
    EXPECT_NE(*next_net, *same_net) << "another /64 shared the template";
    EXPECT_EQ(p.Pick(v6("2001:db8:1:2::1", 3000), t0), first) << "the template was lost";
  }
}

// The scheduler tables are built on the control thread, once per change of the destinations'
// keys or weights, and shared: a view that changes only load figures, verdicts or states takes
// the previous view's table, and every worker's picker schedules from that one table.
TEST(SchedTableShare, OnlyAMembershipOrWeightChangeBuildsATable) {
  for (const char* name : {"mh", "sh", "wrr"}) {
    SCOPED_TRACE(name);
    VirtualService vs = Service(3);
    vs.config.scheduler = name;
    sched::SchedulerOptions options;
    options.mh_table_size = 251;
    int builds = 0;
    std::vector<DestInputs> in = Inputs(3);
    auto v1 = BuildServiceView(vs, in, 1);
    builds += ShareSchedTable(nullptr, *v1, options);
    ASSERT_NE(v1->sched_table, nullptr);

    // Load figures, a check verdict (availability), a passive mark: no new table.
    membership::ServerRecord agent;
    agent.reg.id = "rs1";
    agent.state = membership::State::kActive;
    agent.load.run_queue = 7;
    agent.load.response_ms = 300;
    vs.dests.begin()->second.agent_id = "rs1";
    in[0].agent = &agent;
    auto v2 = BuildServiceView(vs, in, 2);
    builds += ShareSchedTable(v1.get(), *v2, options);
    agent.load.run_queue = 1;
    in[1].check_up = false;
    in[2].passive_down = true;
    auto v3 = BuildServiceView(vs, in, 3);
    builds += ShareSchedTable(v2.get(), *v3, options);
    EXPECT_EQ(builds, 1);
    EXPECT_EQ(v3->sched_table, v1->sched_table);

    // A weight (a misc_dynamic weight too) or the membership of the service: a new table.
    in[1].check_weight = 5;
    auto v4 = BuildServiceView(vs, in, 4);
    builds += ShareSchedTable(v3.get(), *v4, options);
    EXPECT_EQ(builds, 2);
    EXPECT_NE(v4->sched_table, v3->sched_table);
    vs.dests[Dest(9)] = DestConfig{};
    in.push_back(Inputs(1)[0]);
    auto v5 = BuildServiceView(vs, in, 5);
    builds += ShareSchedTable(v4.get(), *v5, options);
    EXPECT_EQ(builds, 3);

    // Two workers adopt the one table and pick alike from it; a load-only view adopts nothing.
    auto shared = std::shared_ptr<const ServiceView>(v5);
    DestPicker w1(options), w2(options);
    w1.OnView(shared);
    w2.OnView(shared);
    EXPECT_EQ(w1.sched_table(), shared->sched_table.get());
    EXPECT_EQ(w2.sched_table(), shared->sched_table.get());
    if (std::string(name) != "wrr") {
      for (uint32_t ip = 1; ip < 200; ++ip) {
        const AddrPort client{IpAddress::V4(0xc0a80000u + ip), 1};
        EXPECT_EQ(w1.Pick(client, TimePoint{}), w2.Pick(client, TimePoint{}));
      }
    }
    agent.load.run_queue = 9;
    auto v6 = BuildServiceView(vs, in, 6);
    EXPECT_FALSE(ShareSchedTable(v5.get(), *v6, options));
    w1.OnView(std::shared_ptr<const ServiceView>(v6));
    EXPECT_EQ(w1.sched_table(), shared->sched_table.get());
  }
}

// Which flows a new view ends: a removed destination's under expire_nodest_conn only; a
// destination marked down by its check only with shutdown-sessions; never for weight 0, a
// passive mark or a drained agent.
TEST(FlowsToEnd, RemovalAndMarkedDownPerTheirOptions) {
  VirtualService vs = Service(4);
  auto it = vs.dests.begin();
  const AddrPort removed = it->first;
  const AddrPort quiesced = (++it)->first;
  const AddrPort shut = (++it)->first;
  const AddrPort down_kept = (++it)->first;
  vs.dests.at(shut).shutdown_sessions = true;
  auto before = BuildServiceView(vs, Inputs(4), 1);
  EXPECT_TRUE(FlowsToEnd(nullptr, *before, true).empty());
  EXPECT_TRUE(FlowsToEnd(before.get(), *before, true).empty());

  vs.dests.erase(removed);
  vs.dests.at(quiesced).weight = 0;
  std::vector<DestInputs> in = Inputs(3);
  in[1].check_up = false;     // shut: marked down
  in[2].check_up = false;     // down_kept: marked down, no shutdown-sessions
  in[0].passive_down = true;  // quiesced: a failed connect too
  auto after = BuildServiceView(vs, in, 2);
  auto ended = FlowsToEnd(before.get(), *after, /*expire_nodest_conn=*/true);
  ASSERT_EQ(ended.size(), 2u);
  EXPECT_EQ(ended[0].dest, removed);
  EXPECT_EQ(ended[0].reason, EndReason::kRemoved);
  EXPECT_EQ(ended[1].dest, shut);
  EXPECT_EQ(ended[1].reason, EndReason::kMarkedDown);
  ended = FlowsToEnd(before.get(), *after, /*expire_nodest_conn=*/false);
  ASSERT_EQ(ended.size(), 1u);
  EXPECT_EQ(ended[0].dest, shut);
  (void)down_kept;
}

// expire_quiescent_template: a persistent client of a weight-0 destination is scheduled anew;
// without it the client keeps its destination.
TEST(DestPicker, ExpireQuiescentTemplateMovesAKnownClientOffAWeightZeroDestination) {
  for (bool expire : {false, true}) {
    SCOPED_TRACE(expire ? "expire_quiescent_template" : "default");
    VirtualService vs = Service(2);
    vs.config.scheduler = "rr";
    vs.config.persistence = vservice::Persistence{60, 32};
    sched::SchedulerOptions options;
    options.expire_quiescent_template = expire;
    DestPicker p(options);
    std::vector<DestInputs> in = Inputs(2);
    std::shared_ptr<SharedPersistence> table;
    p.OnView(WithTable(vs, BuildServiceView(vs, in, 1), table, expire));
    const AddrPort client{IpAddress::V4(0xc0a80001), 1};
    const auto first = p.Pick(client, TimePoint{});
    ASSERT_TRUE(first.has_value());
    auto q = vs.dests.begin();
    std::advance(q, static_cast<long>(*first));
    q->second.weight = 0;
    p.OnView(WithTable(vs, BuildServiceView(vs, in, 2), table));
    const auto again = p.Pick({client.addr, 2}, TimePoint{});
    EXPECT_EQ(again == first, !expire);
  }
}

// Under expire_nodest_conn the sorry server's flows end when an edit removes or replaces it,
// as keepalived's sorry server is a destination of its own; without the option they go on.
TEST(FlowsToEnd, ARemovedSorryServerEndsItsFlowsUnderExpireNodestConn) {
  VirtualService vs = Service(1);
  vs.config.sorry_server = Dest(99);
  auto before = BuildServiceView(vs, Inputs(1), 1);
  EXPECT_TRUE(FlowsToEnd(before.get(), *BuildServiceView(vs, Inputs(1), 2), true).empty());
  vs.config.sorry_server = Dest(98);
  auto after = BuildServiceView(vs, Inputs(1), 3);
  auto ended = FlowsToEnd(before.get(), *after, /*expire_nodest_conn=*/true);
  ASSERT_EQ(ended.size(), 1u);
  EXPECT_EQ(ended[0].dest, Dest(99));
  EXPECT_TRUE(ended[0].sorry);
  EXPECT_STREQ(EndReasonText(ended[0]), "sorry server removed (expire_nodest_conn)");
  EXPECT_TRUE(FlowsToEnd(before.get(), *after, /*expire_nodest_conn=*/false).empty());
}

// ipvsadm -L -c's templates: a persistent client's network (masked by -M, port 0), the
// destination it sticks to, the time left; gone once expired.
TEST(DestPicker, TemplatesListEachClientNetworkAndItsDestination) {
  const VirtualService vs = PersistentRr(Service(2), 24);
  std::shared_ptr<SharedPersistence> table;
  const ServiceViewPtr view = WithTable(vs, BuildServiceView(vs, Inputs(2), 1), table);
  DestPicker p({});
  p.OnView(view);
  EXPECT_TRUE(ListTemplates(*view, TimePoint{}).empty());
  const auto first = p.Pick({IpAddress::V4(0xc0a80105), 40000}, TimePoint{});
  ASSERT_TRUE(first.has_value());
  const auto t = ListTemplates(*view, TimePoint{} + std::chrono::seconds(10));
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t[0].network, (AddrPort{IpAddress::V4(0xc0a80100), 0}));
  EXPECT_EQ(t[0].dest, Dest(static_cast<uint8_t>(*first + 1)));
  EXPECT_EQ(t[0].expires_in, std::chrono::seconds(50));
  EXPECT_TRUE(ListTemplates(*view, TimePoint{} + std::chrono::seconds(60)).empty());
  // A second worker's picker shares the table: the client's network goes where it went.
  DestPicker other({});
  other.OnView(view);
  (void)other.Pick({IpAddress::V4(0xc0a80209), 1}, TimePoint{});  // moves rr's cursor
  EXPECT_EQ(other.Pick({IpAddress::V4(0xc0a80177), 2}, TimePoint{} + std::chrono::seconds(1)),
            first);
}

// The same on IPv6 (-M as a prefix length): clients of one /64 share a template, listed with
// the whole network; a peer's template for another network is adopted and listed too, one of
// the other family is refused.
TEST(DestPicker, Ipv6TemplatesListTheirWholeNetwork) {
  auto v6 = [](const char* text) { return *IpAddress::Parse(text); };
  VirtualService v6_service;
  v6_service.key = ServiceKey{vservice::Proto::kTcp, v6("2001:db8::fe"), 80};
  v6_service.dests[{v6("2001:db8::1"), 80}] = DestConfig{};
  v6_service.dests[{v6("2001:db8::2"), 80}] = DestConfig{};
  const VirtualService vs = PersistentRr(std::move(v6_service), 64);
  std::shared_ptr<SharedPersistence> table;
  const ServiceViewPtr view = WithTable(vs, BuildServiceView(vs, Inputs(2), 1), table);
  DestPicker p({});
  p.OnView(view);
  const auto first = p.Pick({v6("2001:db8:1:2::77"), 40000}, TimePoint{});
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(p.Pick({v6("2001:db8:1:2:ffff::1"), 40001}, TimePoint{}), first)
      << "one /64, one template";
  auto t = ListTemplates(*view, TimePoint{} + std::chrono::seconds(10));
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t[0].network, (AddrPort{v6("2001:db8:1:2::"), 0}));
  EXPECT_EQ(t[0].dest, view->dests[*first].dest);
  const size_t other = 1 - *first;
  EXPECT_TRUE(table->Adopt(v6("2001:db8:9::"), view->dests[other].backend.key,
                           TimePoint{} + std::chrono::seconds(30), TimePoint{}));
  EXPECT_FALSE(table->Adopt(IpAddress::V4(0x0a000000), view->dests[other].backend.key,
                            TimePoint{} + std::chrono::seconds(30), TimePoint{}));
  EXPECT_EQ(p.Pick({v6("2001:db8:9::5"), 1}, TimePoint{} + std::chrono::seconds(1)), other);
  t = ListTemplates(*view, TimePoint{} + std::chrono::seconds(10));
  ASSERT_EQ(t.size(), 2u);
  std::sort(t.begin(), t.end(), [](const auto& a, const auto& b) { return a.network < b.network; });
  EXPECT_EQ(t[0].network, (AddrPort{v6("2001:db8:1:2::"), 0}));
  EXPECT_EQ(t[1].network, (AddrPort{v6("2001:db8:9::"), 0}));
  EXPECT_EQ(t[1].dest, view->dests[other].dest);
}

// Schedulers without a table (lc, wlc, ...) build nothing, whatever changes.
TEST(SchedTableShare, SchedulersWithoutATableBuildNothing) {
  VirtualService vs = Service(2);
  vs.config.scheduler = "wlc";
  auto v1 = BuildServiceView(vs, Inputs(2), 1);
  EXPECT_FALSE(ShareSchedTable(nullptr, *v1, {}));
  EXPECT_EQ(v1->sched_table, nullptr);
}

}  // namespace
}  // namespace vsc::director
