// The Chord ring and the clip relay end to end (issue 9, DESIGN.md §8): a director and 6 real
// servers with --relay as processes on 127.0.0.1; clients (src/client/ring_client.h) in the test
// process. Publish / subscribe / fetch in every mode, a stale table answered MOVED, forwards
// along the fingers, kill -9 of a busy group's owner under load (no acked clip lost, the
// subscriber resumes without a gap or a duplicate) and a node joining mid-run (its arc's clips
// handed over before it serves).
#include <signal.h>

#include <atomic>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "bench/ring_loop.h"
#include "client/ring_client.h"
#include "client/ring_subscription.h"
#include "integration/cluster_harness.h"
#include "relay/clip_codec.h"
#include "ring/id.h"

namespace vsc::integration {
namespace {

using namespace std::chrono_literals;
using client::RingClient;
using client::RingClientOptions;
using client::RingMode;
using client::RingSubscription;

constexpr int kRingNodes = 6;

std::vector<uint8_t> Payload(const std::string& group, uint64_t n) {
  const std::string text = group + "#" + std::to_string(n);
  return std::vector<uint8_t>(text.begin(), text.end());
}

// The ring once rs7 joined rs1..rs6 (endpoints play no part in ownership).
ring::Ring WithASeventhNode() {
  std::vector<ring::NodeSpec> seven;
  for (int i = 1; i <= kRingNodes + 1; ++i) {
    seven.push_back({"rs" + std::to_string(i), {"127.0.0.1", 1}});
  }
  return std::move(ring::Ring::Build(1, seven)).value();
}

// The first group named prefix-0, prefix-1, ... that `wanted` accepts.
std::string FindGroup(const std::string& prefix,
                      const std::function<bool(const std::string&)>& wanted) {
  for (int n = 0;; ++n) {
    std::string g = prefix + "-" + std::to_string(n);
    if (wanted(g)) return g;
  }
}

// The acks of one group from several talker threads, seq -> bytes; a seq acked twice fails.
class AckLog {
 public:
  void Record(uint64_t seq, std::vector<uint8_t> bytes) {
    std::lock_guard lock(mu_);
    EXPECT_TRUE(acked_.emplace(seq, std::move(bytes)).second) << "seq " << seq << " acked twice";
  }
  size_t size() {
    std::lock_guard lock(mu_);
    return acked_.size();
  }
  // Once the talkers are done.
  const std::map<uint64_t, std::vector<uint8_t>>& acked() const { return acked_; }

 private:
  std::mutex mu_;
  std::map<uint64_t, std::vector<uint8_t>> acked_;
};

// Acked clips missing from `got` or held there with other bytes.
size_t Missing(const AckLog& log, const std::vector<client::Clip>& got) {
  std::map<uint64_t, std::vector<uint8_t>> by_seq;
  for (const client::Clip& c : got) by_seq[c.seq] = c.bytes;
  size_t missing = 0;
  for (const auto& [seq, bytes] : log.acked()) {
    auto it = by_seq.find(seq);
    missing += it == by_seq.end() || it->second != bytes;
  }
  return missing;
}

// A subscriber of one group, read by the test's thread, and what it heard.
class Listener {
 public:
  Listener(RingClientOptions options, const Clock& clock, const std::string& group)
      : client_(options, clock), subscription_(client_, group, 0), clock_(clock) {}

  void ListenUntil(const std::function<bool()>& done, Duration limit) {
    const TimePoint end = clock_.Now() + limit;
    while (!done() && clock_.Now() < end) {
      auto clip = subscription_.Next(std::min(end, clock_.Now() + 100ms));
      ASSERT_TRUE(clip.ok()) << clip.status().ToString();
      if (clip->has_value()) heard_.push_back(std::move(**clip));
    }
  }
  // Until it heard `seq`; then checks the clips came in strictly increasing seq order.
  void ListenThrough(uint64_t seq, Duration limit) {
    ListenUntil([&] { return !heard_.empty() && heard_.back().seq >= seq; }, limit);
    for (size_t i = 1; i < heard_.size(); ++i) {
      ASSERT_GT(heard_[i].seq, heard_[i - 1].seq) << "out of order or duplicate";
    }
  }
  const std::vector<client::Clip>& heard() const { return heard_; }
  const client::SubscriptionStats& stats() const { return subscription_.stats(); }

 private:
  RingClient client_;
  RingSubscription subscription_;
  const Clock& clock_;
  std::vector<client::Clip> heard_;
};

class RingTest : public ClusterTest {
 protected:
  void SetUp() override {
    StartCluster([this](bench::LocalClusterOptions& o) {
      o.real_servers = kRingNodes;
      o.relay = true;
      o.rs_workers = 2;
      Tune(o);
    });
    if (HasFatalFailure()) return;
    ASSERT_TRUE(WaitForRingSize(kRingNodes)) << "work dir " << work_dir_;
  }

  virtual void Tune(bench::LocalClusterOptions&) {}

  RingClientOptions Options(RingMode mode) const {
    RingClientOptions o;
    o.ring_port = cluster_->ring_port();
    o.mode = mode;
    o.timeout = 2s;
    o.attempts = 10;
    return o;
  }

  // Polls the director's table until it lists n members and every running node routes with
  // that version (vsc_rs_ring_version on its /metrics).
  bool WaitForRingSize(size_t n) {
    RingClient c(Options(RingMode::kPrefetch), clock_);
    return WaitUntil(
        [&] {
          auto t = c.RefreshTable();
          if (!t.ok() || (*t)->size() != n) return false;
          for (int i = 0; i < cluster_->size(); ++i) {
            if (!cluster_->server_running(i)) continue;
            auto m = AdminHttpGet(cluster_->server_http_port(i), "/metrics", "", 2s);
            if (!m.ok() || m->first != 200) return false;
            auto v = MetricValue(m->second, "vsc_rs_ring_version");
            if (!v.ok() || static_cast<uint64_t>(*v) != (*t)->version()) return false;
          }
          return true;
        },
        10s, 20ms);
  }

  // The index of the real server that owns `group` in the director's current table.
  int OwnerIndex(const std::string& group) {
    RingClient c(Options(RingMode::kPrefetch), clock_);
    auto t = c.RefreshTable();
    EXPECT_TRUE(t.ok());
    if (!t.ok()) return -1;
    const std::string owner = (*t)->Owner(group).name;
    for (int i = 0; i < cluster_->size(); ++i) {
      if (cluster_->server_id(i) == owner) return i;
    }
    return -1;
  }

  double RingCounter(const std::string& event) {
    std::string text = Metrics();
    auto v = MetricValue(text, "vsc_director_ring_requests_total{kind=\"" + event + "\"}");
    return v.ok() ? *v : -1;
  }
};

TEST_F(RingTest, PublishSubscribeAndFetchInEveryMode) {
  for (RingMode mode : {RingMode::kPrefetch, RingMode::kAsk, RingMode::kViaDirector}) {
    SCOPED_TRACE(std::string(client::RingModeName(mode)));
    const std::string group = "talk-" + std::string(client::RingModeName(mode));
    RingClient talker(Options(mode), clock_);
    RingClient listener_client(Options(mode), clock_);
    RingSubscription listener(listener_client, group, 0);
    // The first Next subscribes; nothing is published yet.
    auto none = listener.Next(clock_.Now() + 200ms);
    ASSERT_TRUE(none.ok()) << none.status().ToString();
    ASSERT_FALSE(none->has_value());
    ASSERT_TRUE(WaitUntil([&] { return listener.stats().subscribes >= 1; }, 2s));
    for (uint64_t n = 1; n <= 20; ++n) {
      auto ack = talker.Publish(group, Payload(group, n));
      ASSERT_TRUE(ack.ok()) << ack.status().ToString();
      EXPECT_EQ(ack->seq, n);
    }
    for (uint64_t n = 1; n <= 20; ++n) {
      auto clip = listener.Next(clock_.Now() + 5s);
      ASSERT_TRUE(clip.ok() && clip->has_value()) << "clip " << n;
      EXPECT_EQ((*clip)->seq, n);
      EXPECT_EQ((*clip)->bytes, Payload(group, n));
    }
    auto fetched = talker.Fetch(group, 15);
    ASSERT_TRUE(fetched.ok()) << fetched.status().ToString();
    ASSERT_EQ(fetched->clips.size(), 5u);
    EXPECT_EQ(fetched->clips.front().seq, 16u);
    EXPECT_EQ(fetched->clips.back().bytes, Payload(group, 20));
    EXPECT_EQ(fetched->last_seq, 20u);
    EXPECT_EQ(listener.stats().duplicates, 0u);
    EXPECT_EQ(listener.stats().gaps, 0u);
  }
}

// The event-loop steps of `vsc bench ring` (bench/ring_loop.h) against real nodes: they time
// only right answers, straight to the owners and through the director, fetches and publishes;
// a fetched clip of another size than expected is counted as an error, not timed.
// Nodes without the per-connection rate bound, as `vsc bench ring` starts them.
class RingBenchStepsTest : public RingTest {
 protected:
  void Tune(bench::LocalClusterOptions& o) override { o.rs_extra_args = {"--relay-rate", "0"}; }
};

TEST_F(RingBenchStepsTest, TheEventLoopStepsTimeOnlyRightAnswers) {
  RingClient c(Options(RingMode::kPrefetch), clock_);
  auto table = c.RefreshTable();
  ASSERT_TRUE(table.ok()) << table.status().ToString();
  std::vector<uint64_t> newest;
  for (int g = 0; g < 8; ++g) {
    auto ack = c.Publish(bench::BenchGroup(g), std::vector<uint8_t>(100, uint8_t(g)));
    ASSERT_TRUE(ack.ok()) << ack.status().ToString();
    newest.push_back(ack->seq);
  }
  bench::LoopOptions o;
  o.connections = 8;
  o.groups = 8;
  o.duration_s = 0.3;
  o.via_host = "127.0.0.1";
  auto run = [&](bool publish, bool via, size_t clip_bytes) {
    o.publish = publish;
    o.via_port = via ? cluster_->ring_port() : 0;
    o.clip_bytes = clip_bytes;
    auto r = bench::RunLoop(**table, o, newest, clock_);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : nlohmann::json{{"requests", 0}, {"errors", 0}};
  };
  // Fetches first: each asks for the newest clip alone, which the publishes would change.
  for (const auto& [publish, via] :
       {std::pair{false, false}, {false, true}, {true, false}, {true, true}}) {
    SCOPED_TRACE(std::string(publish ? "publish" : "fetch") + (via ? " via director" : ""));
    const nlohmann::json r = run(publish, via, 100);
    EXPECT_GT(r["requests"].get<uint64_t>(), 10u);
    EXPECT_EQ(r["errors"].get<uint64_t>(), 0u) << r.dump();
    if (!publish && via) {
      const nlohmann::json wrong = run(false, false, 101);  // every stored clip has 100 bytes
      EXPECT_EQ(wrong["requests"].get<uint64_t>(), 0u);
      EXPECT_GT(wrong["errors"].get<uint64_t>(), 10u);
    }
  }
}

TEST_F(RingTest, PrefetchClientsNeverTouchTheDirectorAfterTheTable) {
  RingClient c(Options(RingMode::kPrefetch), clock_);
  ASSERT_TRUE(c.RefreshTable().ok());
  const double tables = RingCounter("table");
  const double via = RingCounter("via_director");
  for (int n = 0; n < 30; ++n) {
    ASSERT_TRUE(c.Publish("direct-" + std::to_string(n % 7), Payload("d", n)).ok());
  }
  EXPECT_EQ(RingCounter("table"), tables);
  EXPECT_EQ(RingCounter("via_director"), via);
  RingClient v(Options(RingMode::kViaDirector), clock_);
  ASSERT_TRUE(v.Publish("direct-0", Payload("d", 99)).ok());
  EXPECT_EQ(RingCounter("via_director"), via + 1);
}

TEST_F(RingTest, AStaleTableIsAnsweredMovedAndTheClientRefreshes) {
  RingClient c(Options(RingMode::kPrefetch), clock_);
  auto table = c.RefreshTable();
  ASSERT_TRUE(table.ok());
  const std::string group = "stale-group";
  const std::string owner = (*table)->Owner(group).name;
  // An older table without the owner: the client sends to the owner's successor.
  std::vector<ring::NodeSpec> others;
  for (const ring::Member& m : (*table)->members()) {
    if (m.name != owner) others.push_back({m.name, m.endpoint});
  }
  auto stale = ring::Ring::Build((*table)->version() - 1, others);
  ASSERT_TRUE(stale.ok());
  c.SetTable(*stale);
  const uint64_t refreshes = c.stats().table_refreshes;
  auto ack = c.Publish(group, Payload(group, 1));
  ASSERT_TRUE(ack.ok()) << ack.status().ToString();
  EXPECT_EQ(c.stats().moved, 1u);
  EXPECT_EQ(c.stats().table_refreshes, refreshes + 1);
  EXPECT_EQ(c.table()->version(), (*table)->version());
  EXPECT_EQ(ack->hops, 0);  // after the refresh it went straight to the owner
}

TEST_F(RingTest, ANonOwnerWithACurrentTableForwardsAlongItsFingers) {
  RingClient c(Options(RingMode::kPrefetch), clock_);
  auto table = c.RefreshTable();
  ASSERT_TRUE(table.ok());
  const std::string group = "forwarded";
  const size_t owner = (*table)->SuccessorIndex(ring::KeyId(group));
  uint64_t expected_seq = 0;
  for (size_t i = 0; i < (*table)->size(); ++i) {
    const ring::Member& m = (*table)->member(i);
    relay::Frame publish;
    publish.type = relay::Type::kPublish;
    publish.key = group;
    publish.version = (*table)->version();
    publish.payload = Payload(group, i);
    auto answer = c.Exchange(m.endpoint.host + ":" + std::to_string(m.endpoint.port), publish);
    ASSERT_TRUE(answer.ok()) << answer.status().ToString();
    ASSERT_EQ(answer->back().type, relay::Type::kAck) << relay::PayloadText(answer->back());
    EXPECT_EQ(answer->back().seq, ++expected_seq);
    if (i == owner) {
      EXPECT_EQ(answer->back().hops, 0);
    } else {
      EXPECT_GE(answer->back().hops, 1) << "from " << m.name;
      EXPECT_LE(answer->back().hops, 4) << "from " << m.name;  // ⌈log2 6⌉ + 1
    }
  }
}

// One talker publishing as fast as acks come, one listener; the owner is killed with SIGKILL
// after 100 acks. Every acked clip must reach the listener exactly once, in seq order, and be
// fetchable from the new owner.
TEST_F(RingTest, KillingABusyOwnerLosesNoAckedClipAndListenersResume) {
  const std::string group = "busy";
  const int owner = OwnerIndex(group);
  ASSERT_GE(owner, 0);
  AckLog log;
  std::atomic<bool> stop{false};
  std::atomic<int> after_kill{0};
  std::atomic<bool> killed{false};
  std::thread talker([&] {
    RingClient c(Options(RingMode::kPrefetch), clock_);
    for (uint64_t n = 1; !stop; ++n) {
      std::vector<uint8_t> bytes = Payload(group, n);
      auto ack = c.Publish(group, bytes);
      if (!ack.ok()) continue;  // not acked: may or may not be delivered
      log.Record(ack->seq, std::move(bytes));
      if (killed) ++after_kill;
    }
  });
  Listener listener(Options(RingMode::kPrefetch), clock_, group);
  listener.ListenUntil([&] { return log.size() >= 100; }, 20s);
  ASSERT_TRUE(cluster_->SignalServer(owner, SIGKILL).ok());
  killed = true;
  listener.ListenUntil([&] { return after_kill >= 100; }, 30s);
  stop = true;
  talker.join();
  ASSERT_GE(after_kill.load(), 100) << "publishing did not resume after the kill";
  // In seq order, no duplicate; every acked clip heard with its bytes.
  listener.ListenThrough(log.acked().rbegin()->first, 10s);
  EXPECT_EQ(Missing(log, listener.heard()), 0u) << "of " << log.size() << " acked clips";
  EXPECT_EQ(listener.stats().duplicates, 0u);
  EXPECT_GE(listener.stats().subscribes, 2u);  // it resubscribed at the new owner
  EXPECT_NE(OwnerIndex(group), owner);
  // The new owner serves every acked clip to a late fetch too.
  RingClient f(Options(RingMode::kAsk), clock_);
  auto all = f.Fetch(group, 0);
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  EXPECT_EQ(Missing(log, all->clips), 0u) << "of " << log.size() << " acked clips";
}

// A seventh node joins; a group in the arc it takes over keeps its clips (handed over before
// the new node serves it) and its numbering.
TEST_F(RingTest, AJoiningNodeTakesItsArcWithItsClips) {
  const ring::Ring after = WithASeventhNode();
  const std::string group =
      FindGroup("arc", [&](const std::string& g) { return after.Owner(g).name == "rs7"; });
  RingClient c(Options(RingMode::kPrefetch), clock_);
  for (uint64_t n = 1; n <= 30; ++n) ASSERT_TRUE(c.Publish(group, Payload(group, n)).ok());
  auto added = cluster_->AddServer();
  ASSERT_TRUE(added.ok()) << added.status().ToString();
  ASSERT_TRUE(WaitForRingSize(kRingNodes + 1));
  ASSERT_EQ(OwnerIndex(group), *added);
  auto fetched = c.Fetch(group, 0);
  ASSERT_TRUE(fetched.ok()) << fetched.status().ToString();
  ASSERT_EQ(fetched->clips.size(), 30u);
  for (uint64_t n = 1; n <= 30; ++n) EXPECT_EQ(fetched->clips[n - 1].bytes, Payload(group, n));
  auto ack = c.Publish(group, Payload(group, 31));
  ASSERT_TRUE(ack.ok()) << ack.status().ToString();
  EXPECT_EQ(ack->seq, 31u);
  const ring::Member& m = c.table()->Owner(group);
  EXPECT_EQ(ack->node, m.endpoint.host + ":" + std::to_string(m.endpoint.port));
}

// A seventh node joins behind the owner of two groups: it enters their successor lists, so
// their owner copies it the clips published before the join (r copies again). Then the owner
// is killed: the new node, next in line, serves every clip.
TEST_F(RingTest, AJoiningNodeReceivesCopiesOfItsPredecessorsClips) {
  const ring::Ring after = WithASeventhNode();
  // The first has rs7 second in its successor list, the other third.
  std::string groups[2];
  for (size_t pos : {1, 2}) {
    groups[pos - 1] = FindGroup("pred", [&](const std::string& g) {
      return after.member(after.SuccessorList(ring::KeyId(g), 3)[pos]).name == "rs7";
    });
  }
  RingClient c(Options(RingMode::kPrefetch), clock_);
  for (const std::string& g : groups) {
    for (uint64_t n = 1; n <= 30; ++n) ASSERT_TRUE(c.Publish(g, Payload(g, n)).ok());
  }
  const int owner = OwnerIndex(groups[0]);
  auto added = cluster_->AddServer();
  ASSERT_TRUE(added.ok()) << added.status().ToString();
  ASSERT_TRUE(WaitForRingSize(kRingNodes + 1));
  ASSERT_EQ(OwnerIndex(groups[0]), owner);
  ASSERT_TRUE(WaitUntil(
      [&] {
        auto m = AdminHttpGet(cluster_->server_http_port(*added), "/metrics", "", 2s);
        if (!m.ok()) return false;
        auto v = MetricValue(m->second, "vsc_rs_relay_total{event=\"copy\"}");
        return v.ok() && *v >= 60;
      },
      10s))
      << "the new node did not receive the 60 clips of its predecessors' groups";
  ASSERT_TRUE(cluster_->SignalServer(owner, SIGKILL).ok());
  auto fetched = c.Fetch(groups[0], 0);
  ASSERT_TRUE(fetched.ok()) << fetched.status().ToString();
  ASSERT_EQ(fetched->clips.size(), 30u);
  for (uint64_t n = 1; n <= 30; ++n) {
    EXPECT_EQ(fetched->clips[n - 1].bytes, Payload(groups[0], n));
  }
}

// A node stopped for a while is SILENT, not DOWN: it stays on the ring.
class RingHandoffTest : public RingTest {
 protected:
  void Tune(bench::LocalClusterOptions& o) override { o.down_after = 50; }

  uint64_t RingVersion(int i) {
    auto m = AdminHttpGet(cluster_->server_http_port(i), "/metrics", "", 2s);
    auto v = m.ok() ? MetricValue(m->second, "vsc_rs_ring_version") : Result<double>(m.status());
    return v.ok() ? static_cast<uint64_t>(*v) : 0;
  }
};

// The handoff window: talkers keep publishing to a group in the arc a joining node takes over
// while the owner's first copy target is stopped, so the owner is still copying clips (for a
// peer timeout each) when the new node pulls the arc. Every acked clip is kept once, under the
// seq it was acked with, in order, for the listener and for a late fetch.
TEST_F(RingHandoffTest, PublishesDuringAHandoffAreNeitherLostNorDuplicated) {
  const ring::Ring after = WithASeventhNode();
  const std::string group =
      FindGroup("window", [&](const std::string& g) { return after.Owner(g).name == "rs7"; });
  AckLog log;
  std::atomic<bool> joined{false};
  std::atomic<int> after_join{0};
  const TimePoint give_up = clock_.Now() + 30s;
  std::vector<std::thread> talkers;
  for (int t = 0; t < 5; ++t) {
    talkers.emplace_back([&, t] {
      RingClient c(Options(RingMode::kPrefetch), clock_);
      for (uint64_t n = 1; after_join < 200 && clock_.Now() < give_up; ++n) {
        std::vector<uint8_t> bytes = Payload(group + "/" + std::to_string(t), n);
        auto ack = c.Publish(group, bytes);
        if (!ack.ok()) continue;
        log.Record(ack->seq, std::move(bytes));
        if (joined) ++after_join;
      }
    });
  }
  Listener listener(Options(RingMode::kPrefetch), clock_, group);
  listener.ListenUntil([&] { return log.size() >= 100; }, 10s);
  const int owner = OwnerIndex(group);
  int copy_target = -1;
  {
    RingClient c(Options(RingMode::kPrefetch), clock_);
    auto t = c.RefreshTable();
    ASSERT_TRUE(t.ok());
    const std::string name = (*t)->member((*t)->SuccessorList(ring::KeyId(group), 3)[1]).name;
    for (int i = 0; i < cluster_->size(); ++i) {
      if (cluster_->server_id(i) == name) copy_target = i;
    }
  }
  ASSERT_GE(copy_target, 0);
  ASSERT_TRUE(cluster_->SignalServer(copy_target, SIGSTOP).ok());
  auto added = cluster_->AddServer();
  ASSERT_TRUE(added.ok()) << added.status().ToString();
  RingClient watcher(Options(RingMode::kPrefetch), clock_);
  const bool both_routed = WaitUntil(
      [&] {
        auto t = watcher.RefreshTable();
        return t.ok() && (*t)->size() == kRingNodes + 1 && RingVersion(owner) == (*t)->version() &&
               RingVersion(*added) == (*t)->version();
      },
      10s);
  ASSERT_TRUE(cluster_->SignalServer(copy_target, SIGCONT).ok());
  ASSERT_TRUE(both_routed) << "the old and the new owner did not get the 7-node table";
  ASSERT_TRUE(WaitForRingSize(kRingNodes + 1));
  joined = true;
  for (auto& t : talkers) t.join();
  ASSERT_GE(after_join.load(), 200) << "publishing did not resume after the join";
  ASSERT_EQ(OwnerIndex(group), *added);
  const uint64_t last = log.acked().rbegin()->first;
  listener.ListenThrough(last, 10s);
  EXPECT_EQ(Missing(log, listener.heard()), 0u) << "of " << log.size() << " acked clips";
  EXPECT_EQ(listener.stats().duplicates, 0u);
  // The buffer keeps the newest 1,024 clips: a late fetch is checked for the last 1,000 seqs
  // (the handoff was within the last 200 acks).
  RingClient f(Options(RingMode::kPrefetch), clock_);
  auto all = f.Fetch(group, last > 1000 ? last - 1000 : 0);
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  std::map<uint64_t, std::vector<uint8_t>> fetched;
  for (const client::Clip& c : all->clips) fetched[c.seq] = c.bytes;
  size_t lost_fetched = 0;
  for (const auto& [seq, bytes] : log.acked()) {
    if (seq + 1000 > last) lost_fetched += fetched.count(seq) == 0 || fetched[seq] != bytes;
  }
  EXPECT_EQ(lost_fetched, 0u) << "of the acked clips after seq " << (last > 1000 ? last - 1000 : 0);
}

}  // namespace
}  // namespace vsc::integration
