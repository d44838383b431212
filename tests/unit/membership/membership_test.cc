#include "membership/membership.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <tuple>
#include <vector>

#include "manual_time.h"

namespace vsc::membership {
namespace {

using std::chrono::milliseconds;
using std::chrono::nanoseconds;

using testing_util::T;

Registration Reg(std::string id, uint64_t incarnation = 1, uint32_t weight = 1) {
  Registration r;
  r.id = std::move(id);
  r.incarnation = incarnation;
  r.weight = weight;
  r.endpoints = {{"lookup-udp", "127.0.0.1", 7001}};
  r.capabilities = {"lookup"};
  return r;
}

Heartbeat Hb(std::string id, uint64_t incarnation, uint64_t counter, bool full = false,
             bool down = false) {
  Heartbeat h;
  h.id = std::move(id);
  h.incarnation = incarnation;
  h.counter = counter;
  h.flag_full = full;
  h.flag_down = down;
  h.load.in_flight = static_cast<uint32_t>(counter);
  return h;
}

State StateOf(const Membership& m, std::string_view id) {
  const ServerRecord* r = m.Find(id);
  EXPECT_NE(r, nullptr) << id;
  return r == nullptr ? State::kRemoved : r->state;
}

// One transition with the given endpoints; returns its reason.
std::string ExpectOne(const std::vector<Transition>& ts, State from, State to) {
  EXPECT_EQ(ts.size(), 1u);
  if (ts.size() != 1) return "";
  EXPECT_EQ(StateName(ts[0].from), StateName(from));
  EXPECT_EQ(StateName(ts[0].to), StateName(to));
  return ts[0].reason;
}

// A server registered at t=0 and ACTIVE after its first heartbeat at t=0.
Membership ActiveServer(Config config = {}) {
  Membership m(config);
  (void)m.Register(Reg("rs1"), T(0));
  (void)m.OnHeartbeat(Hb("rs1", 1, 1), T(0));
  EXPECT_EQ(StateOf(m, "rs1"), State::kActive);
  return m;
}

TEST(MembershipTest, RegistrationCreatesJoiningServer) {
  Membership m(Config{});
  uint64_t v0 = m.version();
  Registration reg = Reg("rs1", 3, 4);
  auto ts = m.Register(reg, T(10));
  EXPECT_EQ(ExpectOne(ts, State::kRemoved, State::kJoining), "registered incarnation 3");
  EXPECT_EQ(ts[0].id, "rs1");
  EXPECT_EQ(ts[0].at, T(10));
  EXPECT_GT(m.version(), v0);

  const ServerRecord* r = m.Find("rs1");
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->reg, reg);
  EXPECT_EQ(r->weight, 4u);
  EXPECT_EQ(r->last_heartbeat, T(10));
  EXPECT_FALSE(AcceptsNewWork(r->state));
  EXPECT_EQ(m.counters().registrations, 1u);
  EXPECT_EQ(m.counters().Transitions(State::kRemoved, State::kJoining), 1u);

  ts = m.OnHeartbeat(Hb("rs1", 3, 1), T(50));
  EXPECT_EQ(ExpectOne(ts, State::kJoining, State::kActive), "first heartbeat");
  EXPECT_EQ(m.Find("rs1")->heartbeats, 1u);
  EXPECT_EQ(m.Find("rs1")->load.in_flight, 1u);
  EXPECT_EQ(m.counters().heartbeats_accepted, 1u);
}

TEST(MembershipTest, WeightZeroRegistrationIsAllowed) {
  Membership m(Config{});
  EXPECT_TRUE(ValidateRegistration(Reg("rs1", 1, 0)).ok());
  (void)m.Register(Reg("rs1", 1, 0), T(0));
  EXPECT_EQ(m.Find("rs1")->weight, 0u);
}

TEST(MembershipTest, FirstHeartbeatWithFullGoesStraightToBusy) {
  Membership m(Config{});
  (void)m.Register(Reg("rs1"), T(0));
  ExpectOne(m.OnHeartbeat(Hb("rs1", 1, 1, /*full=*/true), T(1)), State::kJoining, State::kBusy);
}

// SILENT exactly at M periods after the last heartbeat and DOWN exactly at N, not a nanosecond
// earlier, for several configurations.
TEST(MembershipTest, SilentAfterMAndDownAfterNPeriodsExactly) {
  for (auto [interval_ms, m_missed, n_missed] : {std::tuple{200, 2, 5}, std::tuple{100, 1, 3},
                                                 std::tuple{50, 3, 3}, std::tuple{1000, 2, 10}}) {
    SCOPED_TRACE(testing::Message() << interval_ms << "ms M=" << m_missed << " N=" << n_missed);
    Config c{milliseconds(interval_ms), m_missed, n_missed};
    Membership m = ActiveServer(c);
    const TimePoint last = T(0);
    const Duration silent_at = milliseconds(interval_ms) * m_missed;
    const Duration down_at = milliseconds(interval_ms) * n_missed;

    EXPECT_TRUE(m.Tick(last + silent_at - nanoseconds(1)).empty());
    EXPECT_EQ(StateOf(m, "rs1"), State::kActive);
    if (m_missed < n_missed) {
      auto ts = m.Tick(last + silent_at);
      std::string reason = ExpectOne(ts, State::kActive, State::kSilent);
      EXPECT_EQ(reason, std::to_string(m_missed) + " heartbeats missed (last " +
                            std::to_string(interval_ms * m_missed) + " ms ago)");
      EXPECT_FALSE(AcceptsNewWork(StateOf(m, "rs1")));
      EXPECT_TRUE(m.Tick(last + down_at - nanoseconds(1)).empty());
      EXPECT_EQ(StateOf(m, "rs1"), State::kSilent);
      ExpectOne(m.Tick(last + down_at), State::kSilent, State::kDown);
    } else {  // M == N: straight to DOWN
      ExpectOne(m.Tick(last + down_at), State::kActive, State::kDown);
    }
    EXPECT_TRUE(m.Tick(last + down_at * 3).empty());
  }
}

TEST(MembershipTest, DefaultTimingReasonMatchesTheLogFormat) {
  Membership m = ActiveServer();
  EXPECT_EQ(ExpectOne(m.Tick(T(412)), State::kActive, State::kSilent),
            "2 heartbeats missed (last 412 ms ago)");
  EXPECT_EQ(ExpectOne(m.Tick(T(1000)), State::kSilent, State::kDown),
            "5 heartbeats missed (last 1000 ms ago)");
}

TEST(MembershipTest, LateTickGoesStraightToDownWithOneTransition) {
  Membership m = ActiveServer();
  ExpectOne(m.Tick(T(5000)), State::kActive, State::kDown);
}

TEST(MembershipTest, HeartbeatsKeepServerActiveAndSilentRecovers) {
  Membership m = ActiveServer();
  // A heartbeat every 300 ms: never two periods missed.
  for (int i = 1; i <= 10; ++i) {
    EXPECT_TRUE(m.Tick(T(300 * i - 1)).empty());
    EXPECT_TRUE(m.OnHeartbeat(Hb("rs1", 1, 1 + i), T(300 * i)).empty());
  }
  const int64_t last = 3000;
  ExpectOne(m.Tick(T(last + 400)), State::kActive, State::kSilent);
  EXPECT_EQ(
      ExpectOne(m.OnHeartbeat(Hb("rs1", 1, 100), T(last + 500)), State::kSilent, State::kActive),
      "heartbeats resumed");
  // The clock restarts from the resumed heartbeat.
  EXPECT_TRUE(m.Tick(T(last + 899)).empty());
  ExpectOne(m.Tick(T(last + 900)), State::kActive, State::kSilent);
  ExpectOne(m.OnHeartbeat(Hb("rs1", 1, 101, /*full=*/true), T(last + 950)), State::kSilent,
            State::kBusy);
}

TEST(MembershipTest, SessionCloseMarksDownAtOnceFromEveryLiveState) {
  for (int variant = 0; variant < 6; ++variant) {
    SCOPED_TRACE(variant);
    Membership m(Config{});
    Registration reg = Reg("rs1");
    reg.needs_catch_up = (variant == 1);
    (void)m.Register(reg, T(0));
    if (variant >= 1) (void)m.OnHeartbeat(Hb("rs1", 1, 1, /*full=*/variant == 3), T(0));
    if (variant == 4) (void)m.Tick(T(400));
    if (variant == 5) {
      ASSERT_TRUE(m.Drain("rs1", T(1)).ok());
    }
    const State before = StateOf(m, "rs1");
    EXPECT_EQ(ExpectOne(m.OnSessionClosed("rs1", T(401)), before, State::kDown),
              "control session closed");
    EXPECT_TRUE(m.OnSessionClosed("rs1", T(402)).empty());  // already DOWN
    // A DOWN incarnation's heartbeats are stale: only re-registration revives it.
    EXPECT_TRUE(m.OnHeartbeat(Hb("rs1", 1, 50), T(403)).empty());
    EXPECT_EQ(StateOf(m, "rs1"), State::kDown);
    EXPECT_EQ(m.counters().heartbeats_stale, 1u);
  }
}

TEST(MembershipTest, SessionCloseOfAnOlderIncarnationIsIgnored) {
  Membership m = ActiveServer();
  ExpectOne(m.Register(Reg("rs1", 2), T(10)), State::kActive, State::kJoining);
  EXPECT_TRUE(m.OnSessionClosed("rs1", 1, T(11)).empty());  // the old process's session
  EXPECT_EQ(StateOf(m, "rs1"), State::kJoining);
  ExpectOne(m.OnSessionClosed("rs1", 2, T(12)), State::kJoining, State::kDown);
  EXPECT_TRUE(m.OnSessionClosed("nobody", T(13)).empty());
}

TEST(MembershipTest, FullFlagMovesToBusyAndBack) {
  Membership m = ActiveServer();
  uint64_t v = m.version();
  EXPECT_EQ(ExpectOne(m.OnHeartbeat(Hb("rs1", 1, 2, true), T(100)), State::kActive, State::kBusy),
            "server reports FULL");
  EXPECT_FALSE(AcceptsNewWork(StateOf(m, "rs1")));
  EXPECT_GT(m.version(), v);
  v = m.version();
  EXPECT_TRUE(m.OnHeartbeat(Hb("rs1", 1, 3, true), T(200)).empty());  // still FULL
  EXPECT_EQ(m.version(), v);
  EXPECT_EQ(ExpectOne(m.OnHeartbeat(Hb("rs1", 1, 4), T(300)), State::kBusy, State::kActive),
            "server no longer FULL");
  // BUSY also goes SILENT when heartbeats stop.
  (void)m.OnHeartbeat(Hb("rs1", 1, 5, true), T(400));
  ExpectOne(m.Tick(T(800)), State::kBusy, State::kSilent);
}

TEST(MembershipTest, DownFlagMarksDownAtOnce) {
  Membership m = ActiveServer();
  EXPECT_EQ(ExpectOne(m.OnHeartbeat(Hb("rs1", 1, 2, false, /*down=*/true), T(100)), State::kActive,
                      State::kDown),
            "server reports DOWN");
  // The DOWN flag wins over FULL, from BUSY and from DRAINING too.
  Membership b = ActiveServer();
  (void)b.OnHeartbeat(Hb("rs1", 1, 2, true), T(10));
  ExpectOne(b.OnHeartbeat(Hb("rs1", 1, 3, true, true), T(20)), State::kBusy, State::kDown);
  Membership d = ActiveServer();
  ASSERT_TRUE(d.Drain("rs1", T(10)).ok());
  ExpectOne(d.OnHeartbeat(Hb("rs1", 1, 3, false, true), T(20)), State::kDraining, State::kDown);
}

TEST(MembershipTest, StaleAndUnknownHeartbeatsAreIgnoredAndCounted) {
  Membership m(Config{});
  (void)m.Register(Reg("rs1", 5), T(0));
  (void)m.OnHeartbeat(Hb("rs1", 5, 10), T(10));
  const uint64_t v = m.version();
  const ServerRecord before = *m.Find("rs1");

  EXPECT_TRUE(m.OnHeartbeat(Hb("rs1", 4, 99, false, true), T(20)).empty());  // older incarnation
  EXPECT_TRUE(m.OnHeartbeat(Hb("rs1", 5, 10), T(30)).empty());               // duplicate counter
  EXPECT_TRUE(m.OnHeartbeat(Hb("rs1", 5, 9), T(40)).empty());                // reordered
  EXPECT_TRUE(m.OnHeartbeat(Hb("rs1", 6, 1), T(50)).empty());  // unregistered incarnation
  EXPECT_TRUE(m.OnHeartbeat(Hb("rs9", 1, 1), T(60)).empty());  // unknown id

  EXPECT_EQ(m.counters().heartbeats_stale, 3u);
  EXPECT_EQ(m.counters().heartbeats_unknown, 2u);
  EXPECT_EQ(m.counters().heartbeats_accepted, 1u);
  EXPECT_EQ(m.version(), v);
  EXPECT_EQ(m.Find("rs1")->last_heartbeat,
            before.last_heartbeat);  // stale ones do not keep it alive
  EXPECT_EQ(m.Find("rs1")->heartbeats, before.heartbeats);
  EXPECT_EQ(m.size(), 1u);
  ExpectOne(m.Tick(T(410)), State::kActive, State::kSilent);
}

TEST(MembershipTest, ReRegistrationAfterDownComesBack) {
  Membership m = ActiveServer();
  ExpectOne(m.Tick(T(1000)), State::kActive, State::kDown);

  EXPECT_EQ(ExpectOne(m.Register(Reg("rs1", 7), T(1200)), State::kDown, State::kJoining),
            "re-registered incarnation 7");
  EXPECT_EQ(m.Find("rs1")->reg.incarnation, 7u);
  EXPECT_TRUE(m.OnHeartbeat(Hb("rs1", 1, 99), T(1210)).empty());  // the old process: stale
  EXPECT_EQ(StateOf(m, "rs1"), State::kJoining);
  // The counter restarts with the incarnation.
  ExpectOne(m.OnHeartbeat(Hb("rs1", 7, 0), T(1220)), State::kJoining, State::kActive);
  // JOINING is timed from the registration: no heartbeat for N periods -> DOWN.
  ExpectOne(m.Register(Reg("rs1", 8), T(2000)), State::kActive, State::kJoining);
  EXPECT_TRUE(m.Tick(T(2999)).empty());
  ExpectOne(m.Tick(T(3000)), State::kJoining, State::kDown);
}

TEST(MembershipTest, OlderIncarnationWhileLiveIsIgnored) {
  Membership m = ActiveServer();  // incarnation 1
  ExpectOne(m.Register(Reg("rs1", 5), T(10)), State::kActive, State::kJoining);
  EXPECT_TRUE(m.Register(Reg("rs1", 4), T(20)).empty());
  EXPECT_EQ(m.counters().registrations_stale, 1u);
  EXPECT_EQ(m.Find("rs1")->reg.incarnation, 5u);
  EXPECT_EQ(StateOf(m, "rs1"), State::kJoining);
}

// The incarnation is the wall clock at start; when it stepped back across a restart the new
// process has the lower number. Once the old one is DOWN, the new one is welcome, and the old
// incarnation's heartbeats and session close no longer count.
TEST(MembershipTest, RestartWithTheClockSteppedBackComesBackOnceDown) {
  Membership m = ActiveServer();
  ExpectOne(m.Register(Reg("rs1", 900), T(10)), State::kActive, State::kJoining);
  ExpectOne(m.OnHeartbeat(Hb("rs1", 900, 1), T(20)), State::kJoining, State::kActive);
  ExpectOne(m.OnSessionClosed("rs1", 900, T(30)), State::kActive, State::kDown);

  EXPECT_EQ(ExpectOne(m.Register(Reg("rs1", 800), T(40)), State::kDown, State::kJoining),
            "re-registered incarnation 800");
  EXPECT_EQ(m.counters().registrations_stale, 0u);
  EXPECT_TRUE(m.OnHeartbeat(Hb("rs1", 900, 50), T(50)).empty());  // the old process: ignored
  EXPECT_TRUE(m.OnSessionClosed("rs1", 900, T(55)).empty());
  ExpectOne(m.OnHeartbeat(Hb("rs1", 800, 1), T(60)), State::kJoining, State::kActive);
}

TEST(MembershipTest, SameIncarnationRegistrationRefreshesWithoutStateChange) {
  Membership m = ActiveServer();
  uint64_t v = m.version();
  EXPECT_TRUE(m.Register(Reg("rs1"), T(5)).empty());  // identical: nothing changes
  EXPECT_EQ(m.version(), v);
  Registration moved = Reg("rs1");
  moved.endpoints = {{"lookup-udp", "127.0.0.1", 7002}};
  EXPECT_TRUE(m.Register(moved, T(6)).empty());
  EXPECT_GT(m.version(), v);
  EXPECT_EQ(m.Find("rs1")->reg.endpoints[0].port, 7002);
  EXPECT_EQ(StateOf(m, "rs1"), State::kActive);
}

TEST(MembershipTest, DrainThenRemove) {
  Membership m = ActiveServer();
  (void)m.Register(Reg("rs2"), T(0));

  auto removed_early = m.Remove("rs1", T(1));
  ASSERT_FALSE(removed_early.ok());
  EXPECT_EQ(removed_early.status().code(), Code::kFailedPrecondition);
  EXPECT_NE(removed_early.status().message().find("drain it first"), std::string::npos);

  uint64_t v = m.version();
  auto drained = m.Drain("rs1", T(10));
  ASSERT_TRUE(drained.ok());
  EXPECT_EQ(ExpectOne(*drained, State::kActive, State::kDraining), "operator drain");
  EXPECT_EQ(m.Find("rs1")->weight, 0u);
  EXPECT_GT(m.version(), v);
  ASSERT_TRUE(m.Drain("rs1", T(11)).ok());
  EXPECT_TRUE(m.Drain("rs1", T(11))->empty());  // idempotent

  // Heartbeats, FULL or not, and M missed periods keep it DRAINING.
  EXPECT_TRUE(m.OnHeartbeat(Hb("rs1", 1, 2, true), T(100)).empty());
  EXPECT_TRUE(m.OnHeartbeat(Hb("rs1", 1, 3), T(200)).empty());
  EXPECT_TRUE(m.Tick(T(600)).empty());
  EXPECT_EQ(StateOf(m, "rs1"), State::kDraining);
  // A restart while draining: the drain stands.
  EXPECT_TRUE(m.Register(Reg("rs1", 2), T(650)).empty());
  EXPECT_EQ(StateOf(m, "rs1"), State::kDraining);
  EXPECT_EQ(m.Find("rs1")->weight, 0u);
  EXPECT_TRUE(m.OnHeartbeat(Hb("rs1", 2, 0), T(700)).empty());

  auto removed = m.Remove("rs1", T(800));
  ASSERT_TRUE(removed.ok());
  EXPECT_EQ(ExpectOne(*removed, State::kDraining, State::kRemoved), "operator remove");
  EXPECT_EQ(m.Find("rs1"), nullptr);
  EXPECT_EQ(m.size(), 1u);
  EXPECT_EQ(m.Remove("rs1", T(801)).status().code(), Code::kNotFound);
  EXPECT_EQ(m.Drain("rs1", T(801)).status().code(), Code::kNotFound);
  EXPECT_TRUE(m.OnHeartbeat(Hb("rs1", 2, 1), T(802)).empty());
  EXPECT_EQ(m.counters().heartbeats_unknown, 1u);
  // Registering again is a new server.
  ExpectOne(m.Register(Reg("rs1", 3), T(900)), State::kRemoved, State::kJoining);
}

TEST(MembershipTest, DrainingServerStillGoesDownWhenHeartbeatsStop) {
  Membership m = ActiveServer();
  ASSERT_TRUE(m.Drain("rs1", T(0)).ok());
  EXPECT_TRUE(m.Tick(T(999)).empty());
  ExpectOne(m.Tick(T(1000)), State::kDraining, State::kDown);
  EXPECT_EQ(m.Drain("rs1", T(1001)).status().code(), Code::kFailedPrecondition);
  ExpectOne(*m.Remove("rs1", T(1002)), State::kDown, State::kRemoved);
}

// ipvsadm -e -w N on a quiescent destination: a weight above 0 ends a drain; weight 0 on an
// ACTIVE server is quiescent (no new work) but no drain.
TEST(MembershipTest, AWeightAboveZeroEndsADrain) {
  Membership m = ActiveServer();
  ASSERT_TRUE(m.Drain("rs1", T(0)).ok());
  auto zero = m.SetWeight("rs1", 0, T(10));
  ASSERT_TRUE(zero.ok());
  EXPECT_TRUE(zero->empty());
  EXPECT_EQ(StateOf(m, "rs1"), State::kDraining);
  auto back = m.SetWeight("rs1", 3, T(20));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(ExpectOne(*back, State::kDraining, State::kActive), "drain ended: operator weight 3");
  EXPECT_EQ(m.Find("rs1")->weight, 3u);
  auto quiet = m.SetWeight("rs1", 0, T(30));
  ASSERT_TRUE(quiet.ok());
  EXPECT_TRUE(quiet->empty());
  EXPECT_EQ(StateOf(m, "rs1"), State::kActive);
  EXPECT_EQ(m.Find("rs1")->weight, 0u);
  // Its heartbeats are judged as before: none since T(0) makes it DOWN at the usual time.
  ASSERT_TRUE(m.Drain("rs1", T(40)).ok());
  ASSERT_TRUE(m.SetWeight("rs1", 1, T(50)).ok());
  EXPECT_FALSE(m.Tick(T(1000)).empty());
  EXPECT_EQ(StateOf(m, "rs1"), State::kDown);
}

TEST(MembershipTest, WeightChangeBumpsVersionLoadOnlyHeartbeatDoesNot) {
  Membership m = ActiveServer();
  uint64_t v = m.version();
  for (int i = 2; i < 20; ++i) {
    Heartbeat hb = Hb("rs1", 1, i);
    hb.load.cpu_pct = i * 3.0;
    hb.applied_seq = i;
    hb.digest = "d" + std::to_string(i);
    EXPECT_TRUE(m.OnHeartbeat(hb, T(i * 100)).empty());
  }
  EXPECT_EQ(m.version(), v);
  EXPECT_EQ(m.Find("rs1")->load.cpu_pct, 19 * 3.0);
  EXPECT_EQ(m.Find("rs1")->applied_seq, 19u);
  EXPECT_EQ(m.Find("rs1")->digest, "d19");

  ASSERT_TRUE(m.SetWeight("rs1", 5, T(2000)).ok());
  EXPECT_EQ(m.Find("rs1")->weight, 5u);
  EXPECT_GT(m.version(), v);
  v = m.version();
  ASSERT_TRUE(m.SetWeight("rs1", 5, T(2000)).ok());  // no change, no bump
  EXPECT_EQ(m.version(), v);
  EXPECT_EQ(m.SetWeight("rs1", kMaxWeight + 1, T(2000)).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(m.SetWeight("nobody", 1, T(2000)).status().code(), Code::kNotFound);
  EXPECT_EQ(m.version(), v);

  // The operator's weight survives a restart of the server.
  (void)m.Register(Reg("rs1", 2, 1), T(3000));
  EXPECT_EQ(m.Find("rs1")->weight, 5u);
}

TEST(MembershipTest, CatchingUpUntilCatchUpDone) {
  Membership m(Config{});
  Registration reg = Reg("rs1");
  reg.needs_catch_up = true;
  (void)m.Register(reg, T(0));
  ExpectOne(m.OnHeartbeat(Hb("rs1", 1, 1, true), T(10)), State::kJoining, State::kCatchingUp);
  EXPECT_FALSE(AcceptsNewWork(StateOf(m, "rs1")));
  EXPECT_TRUE(m.OnHeartbeat(Hb("rs1", 1, 2), T(20)).empty());
  // M missed periods: still catching up (it takes no work anyway); N: DOWN.
  EXPECT_TRUE(m.Tick(T(420)).empty());
  Heartbeat hb = Hb("rs1", 1, 3);
  hb.applied_seq = 42;
  (void)m.OnHeartbeat(hb, T(500));
  EXPECT_EQ(ExpectOne(m.CatchUpDone("rs1", T(510)), State::kCatchingUp, State::kActive),
            "caught up (applied seq 42)");
  EXPECT_TRUE(m.CatchUpDone("rs1", T(520)).empty());
  EXPECT_TRUE(m.CatchUpDone("nobody", T(520)).empty());

  // Caught up before the first heartbeat: that heartbeat makes it ACTIVE.
  reg.id = "rs2";
  (void)m.Register(reg, T(600));
  EXPECT_TRUE(m.CatchUpDone("rs2", T(610)).empty());
  ExpectOne(m.OnHeartbeat(Hb("rs2", 1, 1), T(620)), State::kJoining, State::kActive);

  // A server catching up still goes DOWN after N missed periods.
  Membership n(Config{});
  reg.id = "rs3";
  (void)n.Register(reg, T(700));
  (void)n.OnHeartbeat(Hb("rs3", 1, 1), T(700));
  EXPECT_TRUE(n.Tick(T(1699)).empty());
  ExpectOne(n.Tick(T(1700)), State::kCatchingUp, State::kDown);
}

TEST(MembershipTest, SnapshotIsSortedByIdAndTickReportsInIdOrder) {
  Membership m(Config{});
  for (const char* id : {"rs3", "rs1", "rs10", "rs2"}) (void)m.Register(Reg(id), T(0));
  auto snap = m.Snapshot();
  ASSERT_EQ(snap.size(), 4u);
  for (size_t i = 1; i < snap.size(); ++i) EXPECT_LT(snap[i - 1].reg.id, snap[i].reg.id);
  auto ts = m.Tick(T(1000));
  ASSERT_EQ(ts.size(), 4u);
  for (size_t i = 1; i < ts.size(); ++i) EXPECT_LT(ts[i - 1].id, ts[i].id);
}

TEST(MembershipTest, ValidationNamesTheProblem) {
  EXPECT_TRUE(ValidateConfig(Config{}).ok());
  EXPECT_FALSE(ValidateConfig(Config{Duration::zero(), 2, 5}).ok());
  EXPECT_FALSE(ValidateConfig(Config{milliseconds(200), 0, 5}).ok());
  Status s = ValidateConfig(Config{milliseconds(200), 5, 2});
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_NE(s.message().find("down_after"), std::string::npos);

  EXPECT_TRUE(ValidateRegistration(Reg("rs1")).ok());
  EXPECT_FALSE(ValidateRegistration(Reg("")).ok());
  EXPECT_FALSE(ValidateRegistration(Reg("rs1", 1, kMaxWeight + 1)).ok());
  Registration bad = Reg("rs1");
  bad.endpoints.push_back({"lookup-tcp", "127.0.0.1", 0});
  EXPECT_NE(ValidateRegistration(bad).message().find("non-zero port"), std::string::npos);
}

TEST(MembershipDeathTest, InvalidConfigAborts) {
  EXPECT_DEATH(Membership(Config{milliseconds(200), 3, 1}), "down_after");
}

}  // namespace
}  // namespace vsc::membership

namespace vsc::membership {
namespace {

TEST(MembershipTest, BeginCatchUpTakesAnActiveServerOutOfServiceUntilCaughtUp) {
  Membership m = ActiveServer();
  const uint64_t v0 = m.version();
  auto ts = m.BeginCatchUp("rs1", "replication: diverged at seq 7", T(10));
  ASSERT_TRUE(ts.ok());
  EXPECT_EQ(ExpectOne(*ts, State::kActive, State::kCatchingUp), "replication: diverged at seq 7");
  EXPECT_FALSE(AcceptsNewWork(StateOf(m, "rs1")));
  EXPECT_GT(m.version(), v0);
  // Heartbeats do not bring it back; only CatchUpDone does.
  EXPECT_TRUE(m.OnHeartbeat(Hb("rs1", 1, 2), T(20)).empty());
  EXPECT_EQ(StateOf(m, "rs1"), State::kCatchingUp);
  EXPECT_EQ(ExpectOne(m.CatchUpDone("rs1", T(30)), State::kCatchingUp, State::kActive),
            "caught up (applied seq 0)");
  // Again: a second call while catching up changes nothing.
  ASSERT_TRUE(m.BeginCatchUp("rs1", "again", T(40)).ok());
  EXPECT_TRUE(m.BeginCatchUp("rs1", "again", T(41))->empty());
}

TEST(MembershipTest, BeginCatchUpOnJoiningWaitsForTheFirstHeartbeat) {
  Membership m(Config{});
  (void)m.Register(Reg("rs1"), T(0));
  auto ts = m.BeginCatchUp("rs1", "snapshot needed", T(1));
  ASSERT_TRUE(ts.ok());
  EXPECT_TRUE(ts->empty());
  EXPECT_EQ(ExpectOne(m.OnHeartbeat(Hb("rs1", 1, 1), T(2)), State::kJoining, State::kCatchingUp),
            "first heartbeat; catching up");
}

TEST(MembershipTest, BeginCatchUpRefusesServersThatTakeNoWork) {
  Membership m = ActiveServer();
  EXPECT_EQ(m.BeginCatchUp("nope", "x", T(1)).status().code(), Code::kNotFound);
  (void)m.OnSessionClosed("rs1", T(2));
  EXPECT_EQ(m.BeginCatchUp("rs1", "x", T(3)).status().code(), Code::kFailedPrecondition);
}

}  // namespace
}  // namespace vsc::membership
