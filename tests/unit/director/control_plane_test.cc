#include "director/control_plane.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>

#include <chrono>
#include <set>
#include <string>

#include "director/dest_picker.h"
#include "director/lookup_view.h"
#include "director/sched_table_share.h"

namespace vsc::director {
namespace {

using namespace std::chrono_literals;

proto::Register MakeRegister(const std::string& id, uint64_t incarnation, uint16_t port,
                             uint32_t weight = 1) {
  proto::Register r;
  r.set_id(id);
  r.set_incarnation(incarnation);
  r.set_weight(weight);
  auto* e = r.add_endpoints();
  e->set_service("lookup-udp");
  e->set_host("127.0.0.1");
  e->set_port(port);
  auto* t = r.add_endpoints();
  t->set_service("lookup-tcp");
  t->set_host("127.0.0.1");
  t->set_port(port);
  return r;
}

proto::Heartbeat MakeHeartbeat(const std::string& id, uint64_t incarnation, uint64_t counter,
                               double run_queue = 0) {
  proto::Heartbeat h;
  h.set_id(id);
  h.set_incarnation(incarnation);
  h.set_counter(counter);
  h.mutable_load()->set_run_queue(run_queue);
  return h;
}

class ControlPlaneTest : public ::testing::Test {
 protected:
  ControlPlane plane_{membership::Config{100ms, 2, 5}, ControlSettings{}};
  ManualClock clock_;
};

TEST_F(ControlPlaneTest, RegistrationAndFirstHeartbeatPublishAnActiveServer) {
  auto ack = plane_.OnRegister(MakeRegister("rs1", 1, 7001), 1, 7101, clock_.Now());
  ASSERT_TRUE(ack.accepted()) << ack.reason();
  EXPECT_EQ(ack.heartbeat_port(), 7101u);
  EXPECT_EQ(ack.heartbeat_interval_ms(), 100u);
  EXPECT_EQ(ack.silent_after(), 2u);
  EXPECT_EQ(ack.down_after(), 5u);
  ASSERT_TRUE(plane_.NeedsPublish());
  ViewPtr v = plane_.BuildView();
  ASSERT_EQ(v->services[kUdpService].size(), 1u);
  EXPECT_FALSE(v->services[kUdpService][0].backend.available);  // JOINING until the first heartbeat
  EXPECT_FALSE(plane_.NeedsPublish());

  plane_.OnHeartbeat(MakeHeartbeat("rs1", 1, 1), clock_.Now());
  ASSERT_TRUE(plane_.StructureChanged());
  v = plane_.BuildView();
  EXPECT_TRUE(v->services[kUdpService][0].backend.available);
  EXPECT_EQ(v->services[kUdpService][0].address.port, 7001);
}

TEST_F(ControlPlaneTest, AnIpv6LookupEndpointIsTheServersAddressInTheView) {
  proto::Register v6 = MakeRegister("rs1", 1, 7001);
  for (auto& e : *v6.mutable_endpoints()) e.set_host("fd00::5");
  ASSERT_TRUE(plane_.OnRegister(v6, 1, 7101, clock_.Now()).accepted());
  ViewPtr v = plane_.BuildView();
  ASSERT_EQ(v->services[kUdpService].size(), 1u);
  EXPECT_EQ(vservice::ToString(v->services[kUdpService][0].address), "[fd00::5]:7001");
}

TEST_F(ControlPlaneTest, RefusesRegistrationsItCannotUse) {
  proto::Register no_udp = MakeRegister("rs1", 1, 7001);
  no_udp.clear_endpoints();
  auto ack = plane_.OnRegister(no_udp, 1, 7101, clock_.Now());
  EXPECT_FALSE(ack.accepted());
  EXPECT_NE(ack.reason().find("lookup-udp"), std::string::npos);

  proto::Register bad_host = MakeRegister("rs1", 1, 7001);
  bad_host.mutable_endpoints(0)->set_host("not-an-ip");
  EXPECT_FALSE(plane_.OnRegister(bad_host, 1, 7101, clock_.Now()).accepted());

  proto::Register heavy = MakeRegister("rs1", 1, 7001, 70000);
  EXPECT_FALSE(plane_.OnRegister(heavy, 1, 7101, clock_.Now()).accepted());
  EXPECT_EQ(plane_.membership().size(), 0u);
}

TEST_F(ControlPlaneTest, MaxServersIsEnforcedAndSlotsAreStable) {
  ControlSettings s;
  s.max_servers = 2;
  ControlPlane plane(membership::Config{100ms, 2, 5}, s);
  EXPECT_TRUE(plane.OnRegister(MakeRegister("a", 1, 1), 1, 1, clock_.Now()).accepted());
  EXPECT_TRUE(plane.OnRegister(MakeRegister("b", 1, 2), 2, 1, clock_.Now()).accepted());
  auto ack = plane.OnRegister(MakeRegister("c", 1, 3), 3, 1, clock_.Now());
  EXPECT_FALSE(ack.accepted());
  EXPECT_EQ(ack.refusal(), proto::RegisterAck::REFUSAL_FULL);
  EXPECT_NE(ack.reason().find("max_servers"), std::string::npos);
  // Re-registration of a known server (restarted: its old session closed) counts once.
  plane.OnSessionClosed("a", 1, clock_.Now());
  EXPECT_TRUE(plane.OnRegister(MakeRegister("a", 2, 1), 4, 1, clock_.Now()).accepted());
  EXPECT_EQ(plane.OnRegister(MakeRegister("c", 1, 3), 5, 1, clock_.Now()).refusal(),
            proto::RegisterAck::REFUSAL_FULL);
}

TEST_F(ControlPlaneTest, MissedHeartbeatsReportDownServers) {
  plane_.OnRegister(MakeRegister("rs1", 1, 7001), 1, 7101, clock_.Now());
  plane_.OnHeartbeat(MakeHeartbeat("rs1", 1, 1), clock_.Now());
  clock_.Advance(499ms);
  EXPECT_TRUE(plane_.Tick(clock_.Now()).empty());  // SILENT, not yet DOWN
  EXPECT_EQ(plane_.membership().Find("rs1")->state, membership::State::kSilent);
  clock_.Advance(1ms);
  auto down = plane_.Tick(clock_.Now());
  ASSERT_EQ(down.size(), 1u);
  EXPECT_EQ(down[0], "rs1");
}

TEST_F(ControlPlaneTest, LoadOnlyChangesNeedPublishButNotStructure) {
  plane_.OnRegister(MakeRegister("rs1", 1, 7001), 1, 7101, clock_.Now());
  plane_.OnHeartbeat(MakeHeartbeat("rs1", 1, 1, 0.0), clock_.Now());
  plane_.BuildView();
  plane_.OnHeartbeat(MakeHeartbeat("rs1", 1, 2, 3.0), clock_.Now());
  EXPECT_TRUE(plane_.NeedsPublish());
  EXPECT_FALSE(plane_.StructureChanged());
  EXPECT_DOUBLE_EQ(plane_.BuildView()->services[kUdpService][0].backend.run_queue, 3.0);
  plane_.OnHeartbeat(MakeHeartbeat("rs1", 1, 3, 3.0), clock_.Now());  // same load
  EXPECT_FALSE(plane_.NeedsPublish());
}

TEST_F(ControlPlaneTest, OperatorActions) {
  plane_.OnRegister(MakeRegister("rs1", 1, 7001), 1, 7101, clock_.Now());
  plane_.OnHeartbeat(MakeHeartbeat("rs1", 1, 1), clock_.Now());
  plane_.BuildView();
  ASSERT_TRUE(plane_.SetWeight("rs1", 5, clock_.Now()).ok());
  EXPECT_EQ(plane_.BuildView()->services[kUdpService][0].backend.weight, 5u);
  EXPECT_EQ(plane_.SetWeight("nope", 1, clock_.Now()).code(), Code::kNotFound);
  ASSERT_TRUE(plane_.Drain("rs1", clock_.Now()).ok());
  ViewPtr v = plane_.BuildView();
  EXPECT_FALSE(v->services[kUdpService][0].backend.available);
  EXPECT_EQ(v->services[kUdpService][0].backend.weight, 0u);
  ASSERT_TRUE(plane_.Remove("rs1", clock_.Now()).ok());
  EXPECT_TRUE(plane_.BuildView()->services[kUdpService].empty());
}

// The same process reconnecting (same incarnation, new session) takes over; the close of its
// old session, seen later, changes nothing.
TEST_F(ControlPlaneTest, OldSessionClosingDoesNotDownAReconnectedServer) {
  ASSERT_TRUE(plane_.OnRegister(MakeRegister("rs1", 1, 7001), 1, 7101, clock_.Now()).accepted());
  plane_.OnHeartbeat(MakeHeartbeat("rs1", 1, 1), clock_.Now());
  ASSERT_TRUE(plane_.OnRegister(MakeRegister("rs1", 1, 7001), 2, 7101, clock_.Now()).accepted());
  EXPECT_EQ(plane_.HolderSession("rs1"), 2u);
  plane_.OnSessionClosed("rs1", 1, clock_.Now());
  EXPECT_EQ(plane_.membership().Find("rs1")->state, membership::State::kActive);
  plane_.OnSessionClosed("rs1", 2, clock_.Now());
  EXPECT_EQ(plane_.membership().Find("rs1")->state, membership::State::kDown);
  EXPECT_FALSE(plane_.HolderSession("rs1").has_value());
}

// A second process with an id in use, newer or older, is refused while the holder's session
// is open, and the holder keeps the id, its state and its heartbeats.
TEST_F(ControlPlaneTest, ADuplicateIdIsRefusedWhileTheHolderIsLive) {
  ASSERT_TRUE(plane_.OnRegister(MakeRegister("rs1", 10, 7001), 1, 7101, clock_.Now()).accepted());
  plane_.OnHeartbeat(MakeHeartbeat("rs1", 10, 1), clock_.Now());
  for (uint64_t incarnation : {11, 9}) {
    auto ack = plane_.OnRegister(MakeRegister("rs1", incarnation, 7999), 2, 7101, clock_.Now());
    EXPECT_FALSE(ack.accepted()) << incarnation;
    EXPECT_EQ(ack.refusal(), proto::RegisterAck::REFUSAL_DUPLICATE_ID);
    EXPECT_NE(ack.reason().find("in use by another live server (incarnation 10"), std::string::npos)
        << ack.reason();
  }
  EXPECT_EQ(plane_.refusals(proto::RegisterAck::REFUSAL_DUPLICATE_ID), 2u);
  EXPECT_EQ(plane_.HolderSession("rs1"), 1u);
  const membership::ServerRecord* rec = plane_.membership().Find("rs1");
  EXPECT_EQ(rec->reg.incarnation, 10u);
  EXPECT_EQ(rec->reg.endpoints[0].port, 7001);
  EXPECT_EQ(rec->state, membership::State::kActive);
  // The refused sessions closing do not touch the holder.
  plane_.OnSessionClosed("rs1", 2, clock_.Now());
  plane_.OnHeartbeat(MakeHeartbeat("rs1", 10, 2), clock_.Now());
  EXPECT_EQ(plane_.membership().Find("rs1")->state, membership::State::kActive);
}

// A restarted holder is welcome once its old session closed (a crash is seen at once) or it
// went DOWN by missed heartbeats (a vanished host), even when its clock stepped back so that its
// incarnation is the lower one.
TEST_F(ControlPlaneTest, ARestartedHolderIsWelcomeOnceItsOldSessionIsGone) {
  ASSERT_TRUE(plane_.OnRegister(MakeRegister("rs1", 10, 7001), 1, 7101, clock_.Now()).accepted());
  plane_.OnSessionClosed("rs1", 1, clock_.Now());
  auto ack = plane_.OnRegister(MakeRegister("rs1", 5, 7001), 2, 7101, clock_.Now());
  ASSERT_TRUE(ack.accepted()) << ack.reason();
  EXPECT_EQ(plane_.membership().Find("rs1")->reg.incarnation, 5u);
  EXPECT_EQ(plane_.membership().Find("rs1")->state, membership::State::kJoining);

  plane_.OnHeartbeat(MakeHeartbeat("rs1", 5, 1), clock_.Now());
  clock_.Advance(500ms);  // N = 5 periods of 100 ms: DOWN, the session is to be closed
  EXPECT_EQ(plane_.Tick(clock_.Now()), std::vector<std::string>{"rs1"});
  EXPECT_FALSE(plane_.HolderSession("rs1").has_value());
  ack = plane_.OnRegister(MakeRegister("rs1", 6, 7001), 3, 7101, clock_.Now());
  ASSERT_TRUE(ack.accepted()) << ack.reason();
  EXPECT_EQ(plane_.HolderSession("rs1"), 3u);
  plane_.OnSessionClosed("rs1", 2, clock_.Now());  // the dead host's session, closed late
  EXPECT_EQ(plane_.membership().Find("rs1")->state, membership::State::kJoining);
}

// Remove while the process runs: that incarnation may not come back by reconnecting; a new
// process (another incarnation) may.
TEST_F(ControlPlaneTest, ARemovedIncarnationIsRefusedAndANewOneWelcome) {
  ASSERT_TRUE(plane_.OnRegister(MakeRegister("rs1", 10, 7001), 1, 7101, clock_.Now()).accepted());
  ASSERT_TRUE(plane_.Drain("rs1", clock_.Now()).ok());
  ASSERT_TRUE(plane_.Remove("rs1", clock_.Now()).ok());
  EXPECT_FALSE(plane_.HolderSession("rs1").has_value());
  auto ack = plane_.OnRegister(MakeRegister("rs1", 10, 7001), 2, 7101, clock_.Now());
  EXPECT_FALSE(ack.accepted());
  EXPECT_EQ(ack.refusal(), proto::RegisterAck::REFUSAL_REMOVED);
  EXPECT_NE(ack.reason().find("removed by the operator"), std::string::npos) << ack.reason();
  EXPECT_EQ(plane_.membership().Find("rs1"), nullptr);
  EXPECT_EQ(plane_.refusals(proto::RegisterAck::REFUSAL_REMOVED), 1u);
  ack = plane_.OnRegister(MakeRegister("rs1", 11, 7001), 3, 7101, clock_.Now());
  EXPECT_TRUE(ack.accepted()) << ack.reason();
  // Once a new incarnation is in, the removal of the old one is forgotten.
  plane_.OnSessionClosed("rs1", 3, clock_.Now());
  EXPECT_TRUE(plane_.OnRegister(MakeRegister("rs1", 10, 7001), 4, 7101, clock_.Now()).accepted());
}

TEST_F(ControlPlaneTest, TheAckEchoesTheAgentNonce) {
  proto::Register reg = MakeRegister("rs1", 1, 7001);
  reg.set_agent_nonce("0123456789abcdef");
  EXPECT_EQ(plane_.OnRegister(reg, 1, 7101, clock_.Now()).agent_nonce(), "0123456789abcdef");
  reg.set_id("");  // refused: still echoed, so the agent trusts the refusal
  EXPECT_EQ(plane_.OnRegister(reg, 2, 7101, clock_.Now()).agent_nonce(), "0123456789abcdef");
}

// A server that registered only a UDP lookup endpoint cannot take TCP connections: it must not
// be a candidate of the TCP service at all (it used to be, and the proxy connected to
// 0.0.0.0:0), while it stays a full candidate of the UDP service.
TEST_F(ControlPlaneTest, AServerWithoutATcpEndpointIsNoCandidateOfTheTcpService) {
  proto::Register udp_only = MakeRegister("rs0", 1, 7000);
  udp_only.mutable_endpoints()->RemoveLast();  // drop its 'lookup-tcp' endpoint
  ASSERT_EQ(udp_only.endpoints_size(), 1);
  ASSERT_TRUE(plane_.OnRegister(udp_only, 1, 7101, clock_.Now()).accepted());
  plane_.OnHeartbeat(MakeHeartbeat("rs0", 1, 1), clock_.Now());

  ViewPtr v = plane_.BuildView();
  ASSERT_EQ(v->services[kUdpService].size(), 1u);
  EXPECT_TRUE(v->services[kTcpService].empty());
  // As the engine serves the built-in entries: their view from the cluster view's candidates.
  auto picker_for = [](const ClusterView& cv, vservice::Proto proto, const std::string& sched) {
    vservice::VirtualServiceTable table;
    const vservice::ServiceKey key{proto, vservice::IpAddress::V4(0x7f000001), 7000};
    vservice::ServiceConfig config;
    config.scheduler = sched;
    EXPECT_TRUE(table.AddService(key, config).ok());
    const auto& candidates = cv.services[LookupServiceIndex(proto)];
    std::vector<LookupDestInputs> inputs(candidates.size());
    for (auto& in : inputs) in.stats = std::make_shared<DestStats>();
    auto view = BuildLookupView(*table.Find(key), candidates, inputs, 1);
    view->stats = std::make_shared<ServiceStats>();
    ShareSchedTable(nullptr, *view, sched::SchedulerOptions{});
    auto picker = std::make_unique<DestPicker>(sched::SchedulerOptions{});
    picker->OnView(view);
    return picker;
  };
  for (const char* name : {"rr", "wlc", "sh", "mh"}) {
    auto tcp = picker_for(*v, vservice::Proto::kTcp, name);
    EXPECT_FALSE(tcp->Pick({vservice::IpAddress::V4(0x7f000001), 4000}, clock_.Now()))
        << name << " picked a server that has no TCP endpoint";
  }

  // With a TCP-capable server beside it, every TCP pick lands on that one, at its address.
  plane_.OnRegister(MakeRegister("rs1", 1, 7001), 2, 7101, clock_.Now());
  plane_.OnHeartbeat(MakeHeartbeat("rs1", 1, 1), clock_.Now());
  v = plane_.BuildView();
  EXPECT_EQ(v->services[kUdpService].size(), 2u);
  ASSERT_EQ(v->services[kTcpService].size(), 1u);
  auto tcp = picker_for(*v, vservice::Proto::kTcp, "wlc");
  auto udp = picker_for(*v, vservice::Proto::kUdp, "wlc");
  std::set<std::string> udp_picked;
  for (uint16_t port = 1; port <= 200; ++port) {
    const vservice::AddrPort client{vservice::IpAddress::V4(0x0a000000u + port), port};
    auto pick = tcp->Pick(client, clock_.Now());
    ASSERT_TRUE(pick.has_value());
    const DestView& server = tcp->view()->dests[*pick];
    EXPECT_EQ(server.server_id, "rs1");
    EXPECT_EQ(server.dest.port, 7001);
    EXPECT_EQ(server.dest.addr.v4(), 0x7f000001u);
    EXPECT_EQ(server.method, vservice::Method::kNat);
    auto upick = udp->Pick(client, clock_.Now());
    ASSERT_TRUE(upick.has_value());
    EXPECT_EQ(udp->view()->dests[*upick].method, vservice::Method::kDr);
    udp_picked.insert(udp->view()->dests[*upick].server_id);
    Bump(udp->view()->dests[*upick].stats->active);  // wlc spreads over both by count
  }
  EXPECT_EQ(udp_picked, (std::set<std::string>{"rs0", "rs1"}));
}

// The FULL and DOWN flags of a heartbeat on the wire reach membership: FULL makes the server
// BUSY (no new work in either service) until a heartbeat without it, DOWN makes it DOWN.
TEST_F(ControlPlaneTest, HeartbeatFlagsFullAndDownChangeTheState) {
  ASSERT_TRUE(plane_.OnRegister(MakeRegister("rs1", 1, 7001), 1, 7101, clock_.Now()).accepted());
  plane_.OnHeartbeat(MakeHeartbeat("rs1", 1, 1), clock_.Now());
  ASSERT_EQ(plane_.membership().Find("rs1")->state, membership::State::kActive);

  proto::Heartbeat full = MakeHeartbeat("rs1", 1, 2);
  full.set_flags(proto::Heartbeat::FLAG_FULL);
  clock_.Advance(100ms);
  plane_.OnHeartbeat(full, clock_.Now());
  EXPECT_EQ(plane_.membership().Find("rs1")->state, membership::State::kBusy);
  ViewPtr v = plane_.BuildView();
  for (int svc = 0; svc < kServiceCount; ++svc) {
    ASSERT_EQ(v->services[svc].size(), 1u);
    EXPECT_FALSE(v->services[svc][0].backend.available) << "service " << svc;
  }

  clock_.Advance(100ms);
  plane_.OnHeartbeat(MakeHeartbeat("rs1", 1, 3), clock_.Now());
  EXPECT_EQ(plane_.membership().Find("rs1")->state, membership::State::kActive);
  EXPECT_TRUE(plane_.BuildView()->services[kTcpService][0].backend.available);

  proto::Heartbeat down = MakeHeartbeat("rs1", 1, 4);
  down.set_flags(proto::Heartbeat::FLAG_DOWN | proto::Heartbeat::FLAG_FULL);
  clock_.Advance(100ms);
  plane_.OnHeartbeat(down, clock_.Now());
  EXPECT_EQ(plane_.membership().Find("rs1")->state, membership::State::kDown);
}

}  // namespace
}  // namespace vsc::director
