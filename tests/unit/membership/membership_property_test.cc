// Random event sequences over several servers: every state change is exactly one allowed
// Transition, counters equal the transitions seen, the version moves exactly when state, weight
// or membership moves, and Tick leaves no server past its SILENT or DOWN deadline.
#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/random.h"
#include "membership/membership.h"

namespace vsc::membership {
namespace {

using std::chrono::milliseconds;

constexpr int kServers = 5;
constexpr int kSteps = 4000;

struct View {
  State state;
  uint32_t weight;
  Registration reg;
};

std::map<std::string, View> Capture(const Membership& m) {
  std::map<std::string, View> out;
  for (const ServerRecord& r : m.Snapshot()) out[r.reg.id] = View{r.state, r.weight, r.reg};
  return out;
}

State StateIn(const std::map<std::string, View>& v, const std::string& id) {
  auto it = v.find(id);
  return it == v.end() ? State::kRemoved : it->second.state;
}

struct Outcome {
  std::vector<std::string> log;  // every transition, for the determinism check
};

Outcome RunRandom(uint64_t seed, const Config& config) {
  Random rng(seed);
  Membership m(config);
  TimePoint now = TimePoint(std::chrono::seconds(100));
  std::array<std::array<uint64_t, kStateCount>, kStateCount> tally{};
  uint64_t total = 0;
  uint64_t heartbeats_sent = 0;
  std::map<std::string, uint64_t> next_counter;
  Outcome outcome;

  auto chance = [&](int percent) { return rng.Uniform(100) < static_cast<uint64_t>(percent); };

  for (int step = 0; step < kSteps; ++step) {
    SCOPED_TRACE(testing::Message() << "seed " << seed << " step " << step);
    now += milliseconds(rng.Uniform(300));
    const std::string id = "rs" + std::to_string(rng.Uniform(kServers));
    const ServerRecord* rec = m.Find(id);
    const uint64_t inc = rec ? rec->reg.incarnation : 1;
    const auto before = Capture(m);
    const uint64_t version_before = m.version();
    const Counters counters_before = m.counters();

    std::vector<Transition> ts;
    std::optional<State> expect_after;  // event-specific postcondition, when the rules fix it
    bool is_tick = false;
    const uint64_t kind = rng.Uniform(100);
    if (kind < 10) {  // (re-)registration, sometimes of an older or newer incarnation
      Registration reg;
      reg.id = id;
      const uint64_t r = rng.Uniform(10);
      reg.incarnation = r == 0 && inc > 0 ? inc - 1 : (r < 4 ? inc + 1 : inc);
      reg.weight = static_cast<uint32_t>(rng.Uniform(4));
      reg.needs_catch_up = chance(30);
      reg.endpoints = {{"lookup-udp", "127.0.0.1", static_cast<uint16_t>(7000 + rng.Uniform(3))}};
      const State state_before = rec ? rec->state : State::kRemoved;
      const bool down_before = rec && state_before == State::kDown;
      // A newer incarnation, or any other one once DOWN (a restart whose clock stepped back),
      // is a new process whose heartbeat counter starts again.
      if (reg.incarnation > inc || (reg.incarnation != inc && down_before)) next_counter[id] = 0;
      ts = m.Register(reg, now);
      if (!rec) expect_after = State::kJoining;
      if (rec && reg.incarnation < inc && !down_before) expect_after = state_before;
      if (rec && ((reg.incarnation > inc && state_before != State::kDraining) || down_before)) {
        expect_after = State::kJoining;
      }
    } else if (kind < 60) {  // heartbeat
      Heartbeat hb;
      hb.id = id;
      hb.incarnation = chance(5) ? inc + rng.Uniform(3) - 1 : inc;
      hb.counter = chance(5) ? next_counter[id] / 2 : next_counter[id]++;
      hb.flag_full = chance(20);
      hb.flag_down = chance(2);
      hb.load.cpu_pct = static_cast<double>(rng.Uniform(100));
      hb.applied_seq = rng.Uniform(1000);
      ++heartbeats_sent;
      ts = m.OnHeartbeat(hb, now);
      const bool accepted = m.counters().heartbeats_accepted > counters_before.heartbeats_accepted;
      if (accepted && hb.flag_down) expect_after = State::kDown;
      if (accepted && !hb.flag_down && before.at(id).state == State::kSilent) {
        expect_after = hb.flag_full ? State::kBusy : State::kActive;
      }
      if (!accepted) expect_after = StateIn(before, id);
    } else if (kind < 64) {
      ts = chance(50) ? m.OnSessionClosed(id, now) : m.OnSessionClosed(id, inc, now);
      if (rec) expect_after = State::kDown;
    } else if (kind < 88) {
      ts = m.Tick(now);
      is_tick = true;
    } else if (kind < 91) {
      auto r = m.Drain(id, now);
      if (r.ok()) {
        ts = *r;
        expect_after = State::kDraining;
      } else {
        EXPECT_TRUE(!rec || rec->state == State::kDown) << r.status().ToString();
      }
    } else if (kind < 94) {
      auto r = m.Remove(id, now);
      if (r.ok()) {
        ts = *r;
        expect_after = State::kRemoved;
      } else {
        EXPECT_TRUE(!rec || (rec->state != State::kDraining && rec->state != State::kDown));
      }
    } else if (kind < 97) {
      const auto w = static_cast<uint32_t>(rng.Uniform(6));
      const bool draining = rec != nullptr && rec->state == State::kDraining;
      auto r = m.SetWeight(id, w, now);
      // Refused only for an unknown id, or to end the drain of a server behind on its data.
      EXPECT_TRUE(r.ok() || !rec || (draining && w > 0)) << r.status().ToString();
      if (r.ok()) {
        ts = *r;
        if (draining && w > 0) expect_after = State::kActive;
      }
    } else {
      ts = m.CatchUpDone(id, now);
      if (rec && rec->state == State::kCatchingUp) expect_after = State::kActive;
    }

    const auto after = Capture(m);
    // Every transition: from = the state before, to = the state after, allowed, one per server.
    std::map<std::string, int> per_id;
    for (const Transition& t : ts) {
      outcome.log.push_back(t.id + ":" + std::string(StateName(t.from)) + ">" +
                            std::string(StateName(t.to)) + ":" + t.reason);
      EXPECT_EQ(++per_id[t.id], 1) << t.id;
      EXPECT_EQ(t.from, StateIn(before, t.id)) << t.id;
      EXPECT_EQ(t.to, StateIn(after, t.id)) << t.id;
      EXPECT_TRUE(IsAllowedTransition(t.from, t.to))
          << StateName(t.from) << " -> " << StateName(t.to);
      EXPECT_FALSE(t.reason.empty());
      EXPECT_EQ(t.at, now);
      tally[static_cast<size_t>(t.from)][static_cast<size_t>(t.to)]++;
      ++total;
    }
    // Every state change has its transition.
    bool changed = before.size() != after.size();
    for (int i = 0; i < kServers; ++i) {
      const std::string sid = "rs" + std::to_string(i);
      const State b = StateIn(before, sid), a = StateIn(after, sid);
      if (b != a) {
        EXPECT_EQ(per_id[sid], 1) << sid << " changed without a transition";
      }
      auto bi = before.find(sid), ai = after.find(sid);
      if (bi != before.end() && ai != after.end()) {
        changed |=
            b != a || bi->second.weight != ai->second.weight || !(bi->second.reg == ai->second.reg);
      }
    }
    if (expect_after) {
      EXPECT_EQ(StateName(StateIn(after, id)), StateName(*expect_after));
    }
    EXPECT_EQ(m.version() != version_before, changed);
    EXPECT_GE(m.version(), version_before);

    EXPECT_EQ(m.counters().transitions, tally);
    EXPECT_EQ(m.counters().TotalTransitions(), total);
    EXPECT_EQ(m.counters().heartbeats_accepted + m.counters().heartbeats_unknown +
                  m.counters().heartbeats_stale,
              heartbeats_sent);

    for (const ServerRecord& r : m.Snapshot()) {
      EXPECT_NE(r.state, State::kRemoved);
      EXPECT_LE(r.weight, kMaxWeight);
      if (r.state == State::kDraining) {
        EXPECT_EQ(r.weight, 0u) << r.reg.id;
      }
      if (!is_tick) continue;
      const Duration since = now - r.last_heartbeat;
      if (r.state == State::kActive || r.state == State::kBusy) {
        EXPECT_LT(since, config.heartbeat_interval * config.silent_after) << r.reg.id;
      }
      if (IsLive(r.state)) {
        EXPECT_LT(since, config.heartbeat_interval * config.down_after) << r.reg.id;
      }
    }
    if (testing::Test::HasFailure()) break;  // one clear failure, not thousands
  }
  // The run must have exercised the machine, or the checks above prove nothing.
  for (State from : {State::kJoining, State::kActive, State::kBusy, State::kSilent,
                     State::kCatchingUp, State::kDraining, State::kDown}) {
    if (from == State::kSilent && config.silent_after == config.down_after) continue;
    uint64_t out = 0;
    for (uint64_t n : tally[static_cast<size_t>(from)]) out += n;
    EXPECT_GT(out, 0u) << "no transition out of " << StateName(from) << " (seed " << seed << ")";
  }
  return outcome;
}

TEST(MembershipPropertyTest, RandomEventSequencesKeepTheInvariants) {
  const Config configs[] = {Config{}, Config{milliseconds(100), 1, 3},
                            Config{milliseconds(150), 3, 3}};
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    for (const Config& c : configs) {
      RunRandom(seed, c);
      if (HasFailure()) return;
    }
  }
}

TEST(MembershipPropertyTest, SameSeedSameTransitions) {
  Outcome a = RunRandom(42, Config{});
  Outcome b = RunRandom(42, Config{});
  Outcome c = RunRandom(43, Config{});
  EXPECT_GT(a.log.size(), 100u);
  EXPECT_EQ(a.log, b.log);
  EXPECT_NE(a.log, c.log);
}

}  // namespace
}  // namespace vsc::membership
