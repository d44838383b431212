#include "director/ring_router.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "common/clock.h"
#include "ring/table_codec.h"

namespace vsc::director {
namespace {

using namespace std::chrono_literals;

membership::Registration Relay(const std::string& id, uint16_t port, bool capability = true) {
  membership::Registration r;
  r.id = id;
  r.incarnation = 1;
  r.endpoints = {{"lookup-udp", "127.0.0.1", 7000}, {"relay", "127.0.0.1", port}};
  r.capabilities = {"lookup", "sql"};
  if (capability) r.capabilities.push_back("relay");
  return r;
}

membership::Heartbeat Beat(const std::string& id, uint64_t counter) {
  membership::Heartbeat h;
  h.id = id;
  h.incarnation = 1;
  h.counter = counter;
  return h;
}

class RingRouterTest : public ::testing::Test {
 protected:
  void Join(const std::string& id, uint16_t port, bool capability = true) {
    m_.Register(Relay(id, port, capability), clock_.Now());
    m_.OnHeartbeat(Beat(id, ++counter_), clock_.Now());
  }
  std::vector<std::string> Names() const {
    std::vector<std::string> out;
    for (const auto& s : router_.ring()->members()) out.push_back(s.name);
    std::sort(out.begin(), out.end());
    return out;
  }

  membership::Membership m_{membership::Config{100ms, 2, 5}};
  ManualClock clock_;
  RingRouter router_{1000};
  uint64_t counter_ = 0;
};

TEST_F(RingRouterTest, ARelayServerJoinsWhenActiveNotBefore) {
  m_.Register(Relay("a", 9001), clock_.Now());
  EXPECT_FALSE(router_.Update(m_));  // JOINING: not yet on the ring
  EXPECT_TRUE(router_.ring()->empty());
  m_.OnHeartbeat(Beat("a", 1), clock_.Now());
  ASSERT_TRUE(router_.Update(m_));
  EXPECT_EQ(router_.ring()->version(), 1000u);
  ASSERT_EQ(router_.ring()->size(), 1u);
  EXPECT_EQ(router_.ring()->member(0).endpoint, (ring::Endpoint{"127.0.0.1", 9001}));
  EXPECT_FALSE(router_.Update(m_));  // nothing changed: no new version
  EXPECT_EQ(router_.ring()->version(), 1000u);
}

TEST_F(RingRouterTest, OnlyServersOfferingRelayWithARelayEndpointAreMembers) {
  Join("a", 9001);
  Join("b", 9002, /*capability=*/false);
  membership::Registration no_endpoint = Relay("c", 9003);
  no_endpoint.endpoints.pop_back();
  m_.Register(no_endpoint, clock_.Now());
  m_.OnHeartbeat(Beat("c", ++counter_), clock_.Now());
  ASSERT_TRUE(router_.Update(m_));
  EXPECT_EQ(Names(), (std::vector<std::string>{"a"}));
}

TEST_F(RingRouterTest, SilentStaysDownLeavesAndEveryChangeIsANewVersion) {
  Join("a", 9001);
  Join("b", 9002);
  ASSERT_TRUE(router_.Update(m_));
  const uint64_t v1 = router_.ring()->version();
  clock_.Advance(250ms);  // 2 periods missed by both: SILENT, still members
  m_.Tick(clock_.Now());
  EXPECT_EQ(m_.Find("a")->state, membership::State::kSilent);
  EXPECT_FALSE(router_.Update(m_));
  m_.OnHeartbeat(Beat("b", ++counter_), clock_.Now());
  clock_.Advance(300ms);  // a: 5.5 periods missed: DOWN; b: 3 missed: SILENT
  m_.Tick(clock_.Now());
  ASSERT_EQ(m_.Find("a")->state, membership::State::kDown);
  ASSERT_TRUE(router_.Update(m_));
  EXPECT_GT(router_.ring()->version(), v1);
  EXPECT_EQ(Names(), (std::vector<std::string>{"b"}));
}

TEST_F(RingRouterTest, BusyStaysCatchingUpLeavesAndComesBack) {
  Join("a", 9001);
  Join("b", 9002);
  ASSERT_TRUE(router_.Update(m_));
  membership::Heartbeat full = Beat("a", ++counter_);
  full.flag_full = true;
  m_.OnHeartbeat(full, clock_.Now());
  ASSERT_EQ(m_.Find("a")->state, membership::State::kBusy);
  EXPECT_FALSE(router_.Update(m_));  // FULL takes no new flows but keeps its groups
  EXPECT_EQ(Names(), (std::vector<std::string>{"a", "b"}));
  ASSERT_TRUE(m_.BeginCatchUp("b", "replica behind", clock_.Now()).ok());
  ASSERT_TRUE(router_.Update(m_));
  EXPECT_EQ(Names(), (std::vector<std::string>{"a"}));
  m_.CatchUpDone("b", clock_.Now());
  ASSERT_TRUE(router_.Update(m_));
  EXPECT_EQ(Names(), (std::vector<std::string>{"a", "b"}));
}

TEST_F(RingRouterTest, ARelayEndpointWithoutHostOrPortIsNoMember) {
  for (const auto& [host, port] : {std::pair<std::string, uint16_t>{"", 9001}, {"127.0.0.1", 0}}) {
    membership::Registration r = Relay(host.empty() ? "no-host" : "no-port", port);
    r.endpoints.back().host = host;
    m_.Register(r, clock_.Now());
    m_.OnHeartbeat(Beat(r.id, ++counter_), clock_.Now());
  }
  Join("ok", 9003);
  ASSERT_TRUE(router_.Update(m_));
  EXPECT_EQ(Names(), (std::vector<std::string>{"ok"}));
}

TEST_F(RingRouterTest, DrainAndRemoveLeaveTheRing) {
  Join("a", 9001);
  Join("b", 9002);
  Join("c", 9003);
  ASSERT_TRUE(router_.Update(m_));
  ASSERT_TRUE(m_.Drain("b", clock_.Now()).ok());
  ASSERT_TRUE(router_.Update(m_));
  EXPECT_EQ(Names(), (std::vector<std::string>{"a", "c"}));
  const uint64_t v = router_.ring()->version();
  ASSERT_TRUE(m_.Remove("b", clock_.Now()).ok());
  EXPECT_FALSE(router_.Update(m_));  // already off the ring
  EXPECT_EQ(router_.ring()->version(), v);
}

TEST_F(RingRouterTest, AMovedEndpointIsANewVersionAndTheTableDecodesToTheRing) {
  Join("a", 9001);
  ASSERT_TRUE(router_.Update(m_));
  membership::Registration moved = Relay("a", 9011);
  moved.incarnation = 2;
  m_.Register(moved, clock_.Now());
  membership::Heartbeat hb = Beat("a", ++counter_);
  hb.incarnation = 2;
  m_.OnHeartbeat(hb, clock_.Now());
  ASSERT_TRUE(router_.Update(m_));
  auto decoded = ring::DecodeTable(router_.table());
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_EQ(*decoded, *router_.ring());
  EXPECT_EQ(decoded->member(0).endpoint.port, 9011);
}

}  // namespace
}  // namespace vsc::director
