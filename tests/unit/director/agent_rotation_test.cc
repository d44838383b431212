// An agent given several directors (issue 11): a standby turns it away (REFUSAL_STANDBY) and it
// registers with the next one at once; a director that becomes a standby closes its sessions,
// and the agent finds the active director; a director that is gone is passed over; a standby on a
// floating VIP (keepalived moved it to its host) takes the agent at once.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "unit/director/control_session_harness.h"
#include "unit/net/net_test_util.h"

namespace vsc::director {
namespace {

using testing::AgentProcess;
using testing::Director;
using testing::Eventually;
using testing::kWall;

const proto::RegisterAck::Refusal kStandby = proto::RegisterAck::REFUSAL_STANDBY;

TEST(AgentRotationTest, AStandbyTurnsTheAgentAwayAndItRegistersWithTheNextDirector) {
  Director standby(kWall, 0);
  Director active(kWall, 0);
  standby.SetStandby("director A");
  AgentProcess agent(kWall, std::vector<uint16_t>{standby.control_port(), active.control_port()});
  ASSERT_TRUE(Eventually([&] { return active.State("rs1") == "ACTIVE"; }))
      << "the agent did not register with the active director";
  EXPECT_GE(standby.Refusals(kStandby), 1u);
  EXPECT_GE(agent.agent().counters().standby_refusals.Get(), 1u);
  EXPECT_EQ(standby.State("rs1"), "") << "the standby must not have taken the registration";
  EXPECT_EQ(agent.agent().counters().registrations.Get(), 1u);
}

TEST(AgentRotationTest, ADirectorThatBecomesAStandbyClosesItsSessionsAndTheAgentMovesOn) {
  Director a(kWall, 0);
  Director b(kWall, 0);
  b.SetStandby("director A");
  AgentProcess agent(kWall, std::vector<uint16_t>{a.control_port(), b.control_port()});
  ASSERT_TRUE(Eventually([&] { return a.State("rs1") == "ACTIVE"; }));

  // B takes the lease over: A learns it has another holder, B that it has none.
  b.SetStandby(std::nullopt);
  a.SetStandby("director B");
  ASSERT_TRUE(Eventually([&] { return b.State("rs1") == "ACTIVE"; }))
      << "the agent did not move to the new active director";
  EXPECT_TRUE(Eventually([&] { return a.State("rs1") == "DOWN"; }))
      << "A kept the server's session: " << a.State("rs1");
  EXPECT_EQ(agent.agent().counters().sessions_lost.Get(), 1u);
  EXPECT_GE(a.Refusals(kStandby), 1u) << "the agent tried A first again, and A turned it away";
}

TEST(AgentRotationTest, AStandbyOnAFloatingVipTakesTheAgentThatReachedIt) {
  Director standby(kWall, 0);
  standby.SetStandby("director A");
  standby.SetFloatingVip(true);
  AgentProcess agent(kWall, std::vector<uint16_t>{standby.control_port()});
  ASSERT_TRUE(Eventually([&] { return standby.State("rs1") == "ACTIVE"; }))
      << "the VIP is on the standby's host: it serves the server's lookups before the lease";
  EXPECT_EQ(standby.Refusals(kStandby), 0u);
  EXPECT_EQ(agent.agent().counters().standby_refusals.Get(), 0u);
}

TEST(AgentRotationTest, ADirectorThatIsGoneIsPassedOverAtOnce) {
  UniqueFd holder(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));  // bound, not listening
  sockaddr_in addr = net::testing::Loopback(0);
  ASSERT_EQ(::bind(holder.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  socklen_t len = sizeof(addr);
  ::getsockname(holder.get(), reinterpret_cast<sockaddr*>(&addr), &len);
  Director live(kWall, 0);
  AgentProcess agent(kWall, std::vector<uint16_t>{ntohs(addr.sin_port), live.control_port()});
  ASSERT_TRUE(Eventually([&] { return live.State("rs1") == "ACTIVE"; }));
  EXPECT_EQ(agent.agent().counters().connect_failures.Get(), 1u)
      << "one failed connect to the dead director, then the live one within the same round";
}

}  // namespace
}  // namespace vsc::director
