// netns_failover_bench: how long the keepalived + etcd director pair takes to fail over (issue 11
// benchmark), on netns_vrrp_test's topology and configuration (vrrp_fixture.h: VRRP advert
// 0.2 s, health and role checks every 1 s, lease TTL 2 s). Not a test: CI builds it and never
// runs it; bench/failover does (docs/benchmarks.md has its figures).
//
// Each round kills the active director and measures, from the kill, when the VIP accepts a TCP
// connection again, when the first lookup through the VIP is answered (and right), and when the
// first write through the VIP is committed; then it restarts what it killed, which joins as the
// standby, and waits until the pair has settled before the next round kills the other director.
// Two kinds of kill:
//   director  kill -9 of the vsc director alone: its host's keepalived sees the health check
//             fail and goes to FAULT (the VIP leaves with a priority-0 advert);
//   host      the host's link goes down and its director and keepalived get kill -9: the other
//             host hears no advert and takes the VIP after 3 adverts + skew (VRRP's master
//             down interval), as when a machine dies.
// After the rounds: both directors' CPU over 30 s at rest (the active one keeps the lease
// alive every TTL/3 and takes the real servers' heartbeats; the standby watches etcd), the
// replicas verified identical.
//
// Environment: VSC_FAILOVER_ROUNDS (default 20, per kind), VSC_FAILOVER_KILL (director, host or
// both; default both).
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <thread>
#include <vector>

#include "common/subprocess.h"
#include "netns/vrrp_fixture.h"

namespace vsc::netns {
namespace {

using namespace std::chrono_literals;

// What one round measured, in ms after the kill.
struct FailoverRound {
  double vip = 0, lookup = 0, write = 0;
};

// A figure's p50 and maximum over the rounds.
std::string P50Max(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  char text[64];
  std::snprintf(text, sizeof text, "p50 %6.0f ms  max %6.0f ms", v[(v.size() - 1) / 2], v.back());
  return text;
}

class FailoverBench : public NetnsVrrpTest {
 protected:
  // Kills the active director `d` (and its host with `host`) and measures the failover.
  std::optional<FailoverRound> KillActive(int d, bool host) {
    RealClock clock;
    const TimePoint killed = clock.Now();
    if (host) {
      EXPECT_TRUE(LinkUp(d, false).ok());
      keepalived_[d]->Kill();
    }
    EXPECT_TRUE(directors_[d]->Signal(SIGKILL).ok());
    EXPECT_TRUE(directors_[d]->Wait(5s).has_value()) << "the director did not die";
    const Duration limit = kLookupBound + 10s;
    auto since = [&] { return ToMillis(clock.Now() - killed); };
    std::optional<double> vip, lookup, write;
    std::thread vip_probe([&] {
      while (!vip && clock.Now() - killed < limit) {
        if (VipAccepts(50ms)) vip = since();
        ::poll(nullptr, 0, 2);
      }
    });
    std::thread writer([&] {
      while (!write && clock.Now() - killed < limit) {
        const Written w = WriteThroughVip(kWriteSql, 500ms);
        if (w.outcome == "ok") write = since();
        ::poll(nullptr, 0, 2);
      }
    });
    while (!lookup && clock.Now() - killed < limit) {
      const Answer a = Lookup(100ms);
      if (a.answered && a.problem.empty()) lookup = since();
    }
    vip_probe.join();
    writer.join();
    if (!vip || !lookup || !write) {
      ADD_FAILURE() << "round without a failover: vip " << vip.has_value() << " lookup "
                    << lookup.has_value() << " write " << write.has_value();
      return std::nullopt;
    }
    return FailoverRound{*vip, *lookup, *write};
  }

  // Brings back what KillActive killed; it joins as the standby.
  void Restart(int d, bool host) {
    const std::string notify = dir_ + "/notify-" + Suffix(d) + ".log";
    std::ofstream(notify, std::ios::trunc).flush();
    if (host) {
      // A dead host's VIP went with it; this one's is still on its interface.
      (void)RunIp({"-n", topo_->Namespace(kDirectors[d]), "addr", "del", std::string(kVip) + "/24",
                   "dev", "eth0"});
      ASSERT_TRUE(LinkUp(d, true).ok());
    }
    ASSERT_NO_FATAL_FAILURE(StartDirector(d));
    if (host) {
      ASSERT_NO_FATAL_FAILURE(StartKeepalived(d));
    }
    ASSERT_TRUE(WaitUntil([&] { return Contains(Role(d).line, "another director holds"); }, 15s))
        << Role(d).line;
    // Its keepalived out of FAULT (or started): it can take the VIP in the next round.
    ASSERT_TRUE(WaitUntil([&] { return Contains(Tail(notify), "INSTANCE vsc BACKUP"); }, 15s))
        << Tail(notify);
  }

  // The active director `d` holds the VIP, sequences and knows every real server.
  void WaitSettled(int d) {
    ASSERT_TRUE(WaitUntil(
        [&] {
          const RoleAnswer r = Role(d);
          return r.exit_code == 0 && !Contains(r.line, "promoting");
        },
        15s))
        << Role(d).line;
    ASSERT_TRUE(WaitUntil([&] { return HasVip(kDirectors[d]); }, 10s));
    ASSERT_TRUE(WaitUntil([&] { return ActiveServers(d) == kServers; }, 15s));
  }

  Status LinkUp(int d, bool up) {
    auto r =
        RunIp({"-n", topo_->Namespace(kDirectors[d]), "link", "set", "eth0", up ? "up" : "down"});
    return r.ok() ? Status::Ok() : r.status();
  }

  // Each director's CPU in ms per second over `window` at rest.
  void PrintRestingCpu(int active, Duration window) {
    Result<Duration> before[2] = {ProcessCpuTime(directors_[0]->pid()),
                                  ProcessCpuTime(directors_[1]->pid())};
    ::poll(nullptr, 0, static_cast<int>(ToMillis(window)));
    for (int d = 0; d < 2; ++d) {
      auto after = ProcessCpuTime(directors_[d]->pid());
      ASSERT_TRUE(before[d].ok() && after.ok());
      std::printf(
          "resting CPU, %s director %s: %.2f ms/s (lease TTL %u ms, kept alive every %u ms; "
          "%d real servers heartbeating every 100 ms)\n",
          d == active ? "active " : "standby", kDirectors[d],
          ToMillis(*after - *before[d]) / (ToMillis(window) / 1000.0), kTtlMs, kTtlMs / 3,
          kServers);
    }
  }

  static constexpr const char* kWriteSql = "UPDATE resources SET size = size + 1 WHERE id = 7";
};

int EnvInt(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::atoi(v) : fallback;
}

TEST_F(FailoverBench, Kill9Rounds) {
  const int rounds = EnvInt("VSC_FAILOVER_ROUNDS", 20);
  const std::string kind =
      std::getenv("VSC_FAILOVER_KILL") ? std::getenv("VSC_FAILOVER_KILL") : "both";
  ASSERT_TRUE(kind == "director" || kind == "host" || kind == "both") << kind;
  ASSERT_GT(rounds, 0);
  WriteAckedThroughVip(3);
  ASSERT_FALSE(HasFailure());
  int active = 0;
  for (const bool host : {false, true}) {
    if ((host && kind == "director") || (!host && kind == "host")) continue;
    std::vector<double> vip, lookup, write;
    for (int r = 0; r < rounds; ++r) {
      auto round = KillActive(active, host);
      ASSERT_TRUE(round.has_value()) << "round " << r;
      std::printf(
          "%s kill, round %2d, director %s: VIP %5.0f ms, lookup %5.0f ms, write %5.0f ms\n",
          host ? "host" : "director", r + 1, kDirectors[active], round->vip, round->lookup,
          round->write);
      std::fflush(stdout);
      vip.push_back(round->vip);
      lookup.push_back(round->lookup);
      write.push_back(round->write);
      ASSERT_NO_FATAL_FAILURE(Restart(active, host));
      active = 1 - active;
      ASSERT_NO_FATAL_FAILURE(WaitSettled(active));
    }
    std::printf("%s kill, %d rounds: VIP accepting        %s\n", host ? "host" : "director", rounds,
                P50Max(vip).c_str());
    std::printf("%s kill, %d rounds: first lookup answered %s\n", host ? "host" : "director",
                rounds, P50Max(lookup).c_str());
    std::printf("%s kill, %d rounds: first write committed %s\n", host ? "host" : "director",
                rounds, P50Max(write).c_str());
  }
  ASSERT_NO_FATAL_FAILURE(PrintRestingCpu(active, 30s));
  EXPECT_TRUE(VerifyOk(active)) << "the replicas differ after the rounds";
}

}  // namespace
}  // namespace vsc::netns
