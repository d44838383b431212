#include "cli/demo_ring.h"

#include <signal.h>

#include <atomic>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "bench/local_cluster.h"
#include "bench/scenarios.h"
#include "cli/demo_output.h"
#include "client/ring_client.h"
#include "client/ring_subscription.h"
#include "common/subprocess.h"
#include "ring/id.h"

namespace vsc::cli {
namespace {

using namespace std::chrono_literals;
using client::RingClient;
using client::RingClientOptions;

constexpr size_t kClipBytes = 512;

// One group's talker: what it had acked (seq -> bytes) and how its failover went. The talker
// thread writes under `mu`; the rest is read after it joined.
struct Talk {
  std::string group;
  std::mutex mu;  // guards acked
  std::map<uint64_t, std::vector<uint8_t>> acked;
  uint64_t unacked = 0;
  uint64_t acked_after_kill = 0;
  Duration longest_pause{0};
  client::RingClientStats stats;
  std::atomic<uint64_t> final_seq{0};  // the last acked seq, once the talker stopped
};

// One listener of a group: every clip it was handed, in arrival order.
struct Heard {
  Talk* talk = nullptr;
  std::vector<client::Clip> clips;
  client::SubscriptionStats stats;
  std::string error;
};

std::vector<uint8_t> ClipBytes(const std::string& group, uint64_t n) {
  std::string text = group + " clip " + std::to_string(n) + " ";
  text.resize(kClipBytes, static_cast<char>('a' + n % 26));
  return std::vector<uint8_t>(text.begin(), text.end());
}

// Publishes a clip every `interval` until `stop`.
void TalkLoop(RingClientOptions o, const Clock& clock, Duration interval,
              const std::atomic<bool>& stop, const std::atomic<bool>& killed, Talk& talk) {
  RingClient c(o, clock);
  TimePoint next = clock.Now(), last_ack = clock.Now();
  for (uint64_t n = 1; !stop; ++n) {
    std::vector<uint8_t> bytes = ClipBytes(talk.group, n);
    auto ack = c.Publish(talk.group, bytes);
    if (ack.ok()) {
      std::lock_guard lock(talk.mu);
      talk.acked[ack->seq] = std::move(bytes);
      talk.longest_pause = std::max(talk.longest_pause, clock.Now() - last_ack);
      last_ack = clock.Now();
      if (killed) ++talk.acked_after_kill;
    } else {
      ++talk.unacked;  // not acked: it may or may not have been stored
    }
    // A talker's pace, not a wait for a condition.
    next += interval;
    std::this_thread::sleep_for(std::max(Duration(0), next - clock.Now()));
  }
  talk.stats = c.stats();
  std::lock_guard lock(talk.mu);
  talk.final_seq = talk.acked.empty() ? 0 : talk.acked.rbegin()->first;
}

// Listens until it heard the talker's last acked clip (once the talker stopped) or `give_up`.
void ListenLoop(RingClientOptions o, const Clock& clock, TimePoint give_up, Heard& heard) {
  RingClient c(o, clock);
  client::RingSubscription sub(c, heard.talk->group, 0);
  while (clock.Now() < give_up) {
    const uint64_t final_seq = heard.talk->final_seq;
    if (final_seq != 0 && sub.last_seq() >= final_seq) break;
    auto clip = sub.Next(std::min(give_up, clock.Now() + 100ms));
    if (!clip.ok()) {
      heard.error = clip.status().ToString();
      break;
    }
    if (clip->has_value()) heard.clips.push_back(std::move(**clip));
  }
  heard.stats = sub.stats();
}

// The director's table, polled until `wanted` accepts it or `timeout` passes.
std::shared_ptr<const ring::Ring> AwaitTable(RingClient& c,
                                             const std::function<bool(const ring::Ring&)>& wanted,
                                             Duration timeout) {
  const TimePoint deadline = c.clock().Now() + timeout;
  for (;;) {
    auto t = c.RefreshTable();
    if (t.ok() && wanted(**t)) return *t;
    if (c.clock().Now() > deadline) return nullptr;
    std::this_thread::sleep_for(10ms);
  }
}

void PrintTable(const ring::Ring& r) {
  Say("  ring version %llu, %zu members:\n", static_cast<unsigned long long>(r.version()),
      r.size());
  for (size_t i = 0; i < r.size(); ++i) {
    const ring::Member& m = r.member(i);
    Say("    %-4s id %s  %s:%u  arc %5.2f %%\n", m.name.c_str(), ring::IdHex(m.id).c_str(),
        m.endpoint.host.c_str(), m.endpoint.port, 100 * r.ArcShare(i));
  }
}

// The groups: talk-1 (its owner is the node killed), then one that the joining node will own
// (the ring without the victim, with rs<nodes+1>; ids come from names), then the next names.
Result<std::vector<std::string>> ChooseGroups(const ring::Ring& start, int groups,
                                              const std::string& joiner, std::string& victim) {
  victim = start.Owner("talk-1").name;
  std::vector<ring::NodeSpec> after{{joiner, {"127.0.0.1", 1}}};
  for (const ring::Member& m : start.members()) {
    if (m.name != victim) after.push_back({m.name, m.endpoint});
  }
  VSC_ASSIGN_OR_RETURN(ring::Ring later, ring::Ring::Build(start.version() + 2, after));
  std::vector<std::string> out{"talk-1"};
  int n = 2;
  while (later.Owner("talk-" + std::to_string(n)).name != joiner) ++n;
  out.push_back("talk-" + std::to_string(n));
  for (int k = 2; static_cast<int>(out.size()) < groups; ++k) {
    if (k != n) out.push_back("talk-" + std::to_string(k));
  }
  out.resize(std::max(1, groups));
  return out;
}

// How a listener's clips compare with its talker's acks; false when a check fails.
bool CheckListener(const Heard& h, int index) {
  const Talk& t = *h.talk;
  std::map<uint64_t, const std::vector<uint8_t>*> by_seq;
  bool ordered = true;
  for (size_t i = 0; i < h.clips.size(); ++i) {
    by_seq[h.clips[i].seq] = &h.clips[i].bytes;
    if (i > 0 && h.clips[i].seq <= h.clips[i - 1].seq) ordered = false;
  }
  size_t missing = 0;
  for (const auto& [seq, bytes] : t.acked) {
    auto it = by_seq.find(seq);
    missing += it == by_seq.end() || *it->second != bytes;
  }
  const bool ok = missing == 0 && ordered && h.error.empty() && !t.acked.empty();
  Say("  %-8s listener %d: heard %4zu clips, %zu acked, %zu of them missing, %s, "
      "subscribed %llu time(s)%s%s\n",
      t.group.c_str(), index, h.clips.size(), t.acked.size(), missing,
      ordered ? "in order, no duplicate" : "OUT OF ORDER OR DUPLICATED",
      static_cast<unsigned long long>(h.stats.subscribes), h.error.empty() ? "" : ": ",
      h.error.c_str());
  return ok;
}

// A late fetch of every group from its current owner holds every acked clip.
bool CheckFetch(RingClientOptions o, const Clock& clock, const Talk& t) {
  RingClient c(o, clock);
  auto all = c.Fetch(t.group, 0);
  if (!all.ok()) {
    Say("  %-8s fetch failed: %s\n", t.group.c_str(), all.status().ToString().c_str());
    return false;
  }
  std::map<uint64_t, const std::vector<uint8_t>*> by_seq;
  for (const client::Clip& clip : all->clips) by_seq[clip.seq] = &clip.bytes;
  size_t missing = 0;
  for (const auto& [seq, bytes] : t.acked) {
    auto it = by_seq.find(seq);
    missing += it == by_seq.end() || *it->second != bytes;
  }
  Say("  %-8s fetch from its owner %s: %zu clips, %zu acked ones missing\n", t.group.c_str(),
      c.table()->Owner(t.group).name.c_str(), all->clips.size(), missing);
  return missing == 0;
}

class RingDemo {
 public:
  RingDemo(const RingDemoOptions& o, const Clock& clock) : o_(o), clock_(clock) {}
  int Run();

 private:
  Status StartCluster();
  bool KillOwner(const std::string& victim);
  bool JoinNode(const std::string& joiner, const std::string& moved_group);
  bool Summary();

  const RingDemoOptions& o_;
  const Clock& clock_;
  std::unique_ptr<bench::LocalCluster> cluster_;
  RingClientOptions client_;
  std::shared_ptr<const ring::Ring> table_;
  std::vector<std::unique_ptr<Talk>> talks_;
  std::vector<std::unique_ptr<Heard>> heard_;
  std::atomic<bool> killed_{false};
  int victim_index_ = -1;
};

Status RingDemo::StartCluster() {
  const std::string dir = std::filesystem::absolute(o_.dir).string() + "/ring";
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  VSC_RETURN_IF_ERROR(bench::EnsureResourceDb(dir + "/resources.db", 1000, [](const auto&) {}));
  bench::LocalClusterOptions co;
  co.vsc_binary = SelfExecutable();
  co.work_dir = dir;
  co.db_path = dir + "/resources.db";
  co.real_servers = o_.nodes;
  co.relay = true;
  co.log_level = "info";
  VSC_ASSIGN_OR_RETURN(cluster_, bench::LocalCluster::Start(co));
  VSC_RETURN_IF_ERROR(cluster_->WaitAllActive(20s));
  client_.ring_port = cluster_->ring_port();
  client_.timeout = 1s;
  client_.attempts = 10;
  RingClient c(client_, clock_);
  const size_t n = static_cast<size_t>(o_.nodes);
  table_ = AwaitTable(
      c, [n](const ring::Ring& r) { return r.size() == n; }, 20s);
  if (!table_) return Unavailable("the ring did not reach " + std::to_string(n) + " nodes in 20 s");
  Say("  director pid %d, ring port 127.0.0.1:%u; %d relay nodes; logs: %s/*.log\n",
      cluster_->director_pid(), cluster_->ring_port(), cluster_->size(), dir.c_str());
  PrintTable(*table_);
  return Status::Ok();
}

bool RingDemo::KillOwner(const std::string& victim) {
  const int index = static_cast<int>(std::stoi(victim.substr(2))) - 1;
  victim_index_ = index;
  const uint64_t before = table_->version();
  Say("  >>> kill -9 %s (pid %d), owner of %s\n", victim.c_str(), cluster_->server_pid(index),
      talks_[0]->group.c_str());
  const TimePoint at = clock_.Now();
  (void)cluster_->SignalServer(index, SIGKILL);
  killed_ = true;
  RingClient c(client_, clock_);
  auto t = AwaitTable(
      c, [&](const ring::Ring& r) { return r.IndexOf(victim) == r.size(); }, 10s);
  if (!t) {
    Say("  >>> the director did not take %s off the ring within 10 s\n", victim.c_str());
    return false;
  }
  Say("  >>> ring version %llu -> %llu after %.0f ms: %s left; %s is now owned by %s, its "
      "successor, which held the copies\n",
      static_cast<unsigned long long>(before), static_cast<unsigned long long>(t->version()),
      ToMillis(clock_.Now() - at), victim.c_str(), talks_[0]->group.c_str(),
      t->Owner(talks_[0]->group).name.c_str());
  table_ = t;
  return true;
}

bool RingDemo::JoinNode(const std::string& joiner, const std::string& moved_group) {
  const uint64_t before = table_->version();
  const std::string from = table_->Owner(moved_group).name;
  Say("  >>> starting %s\n", joiner.c_str());
  const TimePoint at = clock_.Now();
  auto added = cluster_->AddServer();
  if (!added.ok()) {
    Say("  >>> %s did not start: %s\n", joiner.c_str(), added.status().ToString().c_str());
    return false;
  }
  RingClient c(client_, clock_);
  auto t = AwaitTable(
      c, [&](const ring::Ring& r) { return r.IndexOf(joiner) < r.size(); }, 10s);
  if (!t) {
    Say("  >>> %s did not join the ring within 10 s\n", joiner.c_str());
    return false;
  }
  Say("  >>> ring version %llu -> %llu after %.0f ms: %s joined; it took %s over from %s with "
      "its clips\n",
      static_cast<unsigned long long>(before), static_cast<unsigned long long>(t->version()),
      ToMillis(clock_.Now() - at), joiner.c_str(), moved_group.c_str(), from.c_str());
  table_ = t;
  return t->Owner(moved_group).name == joiner;
}

bool RingDemo::Summary() {
  bool ok = true;
  for (const auto& t : talks_) {
    Say("  %-8s talker: %zu clips acked (%llu after the kill), %llu not acked; longest pause "
        "between two acks %.0f ms; %llu tries of a next successor, %llu MOVED answers\n",
        t->group.c_str(), t->acked.size(), static_cast<unsigned long long>(t->acked_after_kill),
        static_cast<unsigned long long>(t->unacked), ToMillis(t->longest_pause),
        static_cast<unsigned long long>(t->stats.failovers),
        static_cast<unsigned long long>(t->stats.moved));
    if (t->acked_after_kill == 0) ok = false;  // publishing must go on after the kill
  }
  int index = 0;
  for (const auto& h : heard_) {
    ok = CheckListener(*h, index % o_.listeners + 1) && ok;
    ++index;
  }
  for (const auto& t : talks_) ok = CheckFetch(client_, clock_, *t) && ok;
  // Every node but the one killed still runs (a crash would be hidden by the failover).
  for (int i = 0; i < cluster_->size(); ++i) {
    if (!cluster_->server_running(i) && i != victim_index_) {
      Say("  %s is not running: it exited on its own (see its log)\n",
          cluster_->server_id(i).c_str());
      ok = false;
    }
  }
  return ok;
}

int RingDemo::Run() {
  Heading("vscluster ring demo (push-to-talk on a Chord ring)");
  Say("A director (the router) and %d relay nodes on 127.0.0.1; %d talkers publish %zu-byte clips\n"
      "every %d ms straight to their group's owner (prefetch mode), %d listeners per group; the\n"
      "owner of a busy group is killed with SIGKILL at %.0f s and a new node joins at %.0f s.\n",
      o_.nodes, o_.groups, kClipBytes, o_.clip_interval_ms, o_.listeners, o_.duration_s / 3,
      2 * o_.duration_s / 3);
  Heading("1. ring");
  if (Status s = StartCluster(); !s.ok()) {
    Say("  cluster did not start: %s\n\nresult: FAILED\n", s.ToString().c_str());
    return 1;
  }
  const std::string joiner = "rs" + std::to_string(o_.nodes + 1);
  std::string victim;
  auto groups = ChooseGroups(*table_, o_.groups, joiner, victim);
  if (!groups.ok()) {
    Say("  %s\n\nresult: FAILED\n", groups.status().ToString().c_str());
    return 1;
  }
  Heading("2. talkers and listeners, a kill and a join");
  for (const std::string& g : *groups) {
    talks_.push_back(std::make_unique<Talk>());
    talks_.back()->group = g;
    Say("  %-8s owned by %s\n", g.c_str(), table_->Owner(g).name.c_str());
  }
  std::atomic<bool> stop{false};
  std::vector<std::thread> threads;
  const TimePoint start = clock_.Now();
  const Duration run =
      std::chrono::duration_cast<Duration>(std::chrono::duration<double>(o_.duration_s));
  for (auto& t : talks_) {
    for (int l = 0; l < o_.listeners; ++l) {
      heard_.push_back(std::make_unique<Heard>());
      heard_.back()->talk = t.get();
      threads.emplace_back(ListenLoop, client_, std::cref(clock_), start + run + 15s,
                           std::ref(*heard_.back()));
    }
    threads.emplace_back(TalkLoop, client_, std::cref(clock_),
                         Duration(std::chrono::milliseconds(o_.clip_interval_ms)), std::cref(stop),
                         std::cref(killed_), std::ref(*t));
  }
  // The demo follows a timeline: these are points in time, not conditions to poll for.
  std::this_thread::sleep_until(start + run / 3);
  bool ok = KillOwner(victim);
  std::this_thread::sleep_until(start + 2 * run / 3);
  ok = JoinNode(joiner, (*groups)[1 % groups->size()]) && ok;
  std::this_thread::sleep_until(start + run);
  stop = true;
  for (auto& th : threads) th.join();
  Heading("3. every listener against what was acked");
  ok = Summary() && ok;
  PrintTable(*table_);
  cluster_->Stop();
  Say("  the ring demo took %.1f s\n\nresult: %s\n", ToSeconds(clock_.Now() - start),
      ok ? "OK" : "FAILED");
  return ok ? 0 : 1;
}

}  // namespace

int RunRingDemo(const RingDemoOptions& options) {
  RealClock clock;
  RingDemo demo(options, clock);
  return demo.Run();
}

}  // namespace vsc::cli
