#include "bench/ring_bench.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <map>
#include <random>
#include <thread>

#include "bench/histogram.h"
#include "bench/local_cluster.h"
#include "bench/ring_loop.h"
#include "client/ring_client.h"
#include "relay/answers.h"
#include "relay/clip_codec.h"

namespace vsc::bench {
namespace {

using client::RingClient;
using client::RingMode;

struct ModeResult {
  Histogram latency;
  uint64_t errors = 0;
  uint64_t hops = 0;
  double seconds = 0;
};

// What a client thread does: publish (to the owner, per the client's mode), publish to a
// random node with a current table (it forwards along its fingers), or fetch the newest clip
// of a group (`since` = its seq - 1, so one clip comes back).
enum class Op { kPublish, kFingers, kFetch };

// One publish sent to a random node; false when it was not acked.
bool PublishAtRandomNode(RingClient& c, const std::string& group, const std::vector<uint8_t>& clip,
                         std::mt19937_64& rng, ModeResult& out) {
  const auto table = c.table();
  const ring::Member& m = table->member(rng() % table->size());
  relay::Frame f;
  f.type = relay::Type::kPublish;
  f.key = group;
  f.version = table->version();
  f.payload = clip;
  auto answer = c.Exchange(relay::EndpointText(m), f);
  if (!answer.ok() || answer->back().type != relay::Type::kAck) return false;
  out.hops += answer->back().hops;
  return true;
}

// One client thread's loop until `end`. `newest`: each group's newest seq (kFetch).
void ClientLoop(const client::RingClientOptions& o, Op op, size_t clip_bytes, int groups,
                const std::vector<uint64_t>& newest, uint64_t seed, TimePoint end,
                const Clock& clock, ModeResult& out) {
  RingClient c(o, clock);
  std::mt19937_64 rng(seed);
  std::vector<uint8_t> clip(clip_bytes, static_cast<uint8_t>(seed));
  if (!c.RefreshTable().ok()) {
    ++out.errors;
    return;
  }
  while (clock.Now() < end) {
    const int g = static_cast<int>(rng() % groups);
    const std::string group = BenchGroup(g);
    const TimePoint start = clock.Now();
    bool ok;
    if (op == Op::kFingers) {
      ok = PublishAtRandomNode(c, group, clip, rng, out);
    } else if (op == Op::kFetch) {
      auto f = c.Fetch(group, newest[g] - 1);
      ok = f.ok() && f->clips.size() == 1 && f->clips[0].bytes.size() == clip_bytes;
    } else {
      ok = c.Publish(group, clip).ok();
    }
    if (!ok) {
      ++out.errors;
      continue;
    }
    out.latency.Record(static_cast<uint64_t>((clock.Now() - start).count()));
  }
}

// Each group's newest seq: one more clip published to each.
Result<std::vector<uint64_t>> PublishOneEach(const client::RingClientOptions& o, int groups,
                                             size_t clip_bytes, const Clock& clock) {
  RingClient c(o, clock);
  std::vector<uint64_t> newest;
  for (int g = 0; g < groups; ++g) {
    VSC_ASSIGN_OR_RETURN(
        client::PublishAck ack,
        c.Publish(BenchGroup(g), std::vector<uint8_t>(clip_bytes, static_cast<uint8_t>(g))));
    newest.push_back(ack.seq);
  }
  return newest;
}

nlohmann::json RunMode(const client::RingClientOptions& o, Op op, int client_count,
                       size_t clip_bytes, const RingBenchOptions& options, const Clock& clock,
                       const std::vector<uint64_t>& newest = {}) {
  const int clients = std::max(1, client_count);
  std::vector<ModeResult> results(clients);
  const TimePoint begin = clock.Now();
  const TimePoint end =
      begin + std::chrono::microseconds(static_cast<int64_t>(options.common.duration_s * 1e6));
  std::vector<std::thread> threads;
  for (int i = 0; i < clients; ++i) {
    threads.emplace_back([&, i] {
      ClientLoop(o, op, clip_bytes, options.groups, newest, 1000 + i, end, clock, results[i]);
    });
  }
  for (auto& t : threads) t.join();
  const double seconds = std::chrono::duration<double>(clock.Now() - begin).count();
  Histogram all;
  uint64_t errors = 0, hops = 0;
  for (const ModeResult& r : results) {
    all.Merge(r.latency);
    errors += r.errors;
    hops += r.hops;
  }
  nlohmann::json j = {{"requests", all.Count()},
                      {"errors", errors},
                      {"mean_us", all.Mean() / 1000.0},
                      {"p50_us", all.Percentile(50) / 1000.0},
                      {"p99_us", all.Percentile(99) / 1000.0},
                      {"requests_per_s", seconds > 0 ? all.Count() / seconds : 0}};
  if (op == Op::kFingers)
    j["mean_hops"] = all.Count() > 0 ? static_cast<double>(hops) / all.Count() : 0;
  return j;
}

// The kill step: one talker publishes to one group as fast as acks come; after 200 acks the
// group's owner is killed with SIGKILL and the talker goes on (its client fails over to the
// next successor) for 200 more acks or 20 s; then every acked clip is looked for, with its
// bytes, in a fetch from the new owner. failover_ms is the longest pause between two acks.
nlohmann::json RunKillStep(LocalCluster& cluster, client::RingClientOptions o, size_t clip_bytes,
                           const Clock& clock) {
  constexpr size_t kBefore = 200, kAfter = 200;
  o.mode = RingMode::kPrefetch;
  RingClient c(o, clock);
  auto table = c.RefreshTable();
  if (!table.ok()) return {{"error", table.status().ToString()}};
  const std::string group = "bench-kill";
  const std::string owner = (*table)->Owner(group).name;
  int victim = -1;
  for (int i = 0; i < cluster.size(); ++i) {
    if (cluster.server_id(i) == owner) victim = i;
  }
  std::map<uint64_t, std::vector<uint8_t>> acked;
  size_t after_kill = 0;
  Duration longest{0};
  TimePoint last_ack = clock.Now();
  const TimePoint give_up = clock.Now() + std::chrono::seconds(30);
  for (uint64_t n = 1; after_kill < kAfter && clock.Now() < give_up; ++n) {
    if (acked.size() == kBefore && after_kill == 0 && victim >= 0) {
      (void)cluster.SignalServer(victim, SIGKILL);
      victim = -1;
    }
    std::vector<uint8_t> clip(clip_bytes, static_cast<uint8_t>(n));
    const std::string tag = std::to_string(n);
    std::copy(tag.begin(), tag.begin() + std::min(tag.size(), clip.size()), clip.begin());
    auto ack = c.Publish(group, clip);
    if (!ack.ok()) continue;
    acked[ack->seq] = std::move(clip);
    longest = std::max(longest, clock.Now() - last_ack);
    last_ack = clock.Now();
    if (victim < 0) ++after_kill;
  }
  RingClient f(o, clock);
  auto all = f.Fetch(group, 0);
  std::map<uint64_t, const std::vector<uint8_t>*> fetched;
  if (all.ok()) {
    for (const client::Clip& clip : all->clips) fetched[clip.seq] = &clip.bytes;
  }
  size_t lost = 0;
  for (const auto& [seq, bytes] : acked) {
    auto it = fetched.find(seq);
    lost += it == fetched.end() || *it->second != bytes;
  }
  return {{"killed", owner},
          {"acked", acked.size()},
          {"acked_after_kill", after_kill},
          {"acked_lost", lost},
          {"failover_ms", std::chrono::duration<double, std::milli>(longest).count()},
          {"fetch_error", all.ok() ? "" : all.status().ToString()}};
}

// The sweep: prefetch, ask and via-director for every (clients, clip bytes) pair, side by side
// per pair; rows of the printed table.
nlohmann::json RunSweep(client::RingClientOptions o, const RingBenchOptions& options,
                        const Clock& clock, const ScenarioLog& log, std::string& table) {
  nlohmann::json out = nlohmann::json::array();
  char line[200];
  for (int clients : options.sweep_clients) {
    for (size_t bytes : options.sweep_clip_bytes) {
      nlohmann::json row = {{"clients", clients}, {"clip_bytes", bytes}};
      for (const auto& [name, mode] :
           {std::pair{"prefetch", RingMode::kPrefetch}, std::pair{"ask", RingMode::kAsk},
            std::pair{"via_director", RingMode::kViaDirector}}) {
        log("ring bench: sweep " + std::to_string(clients) + " clients, " + std::to_string(bytes) +
            " B, " + name);
        o.mode = mode;
        row["modes"][name] = RunMode(o, Op::kPublish, clients, bytes, options, clock);
      }
      const auto& m = row["modes"];
      const double via = m["via_director"]["p50_us"];
      row["prefetch_p50_over_via_director"] =
          via > 0 ? m["prefetch"]["p50_us"].get<double>() / via : 0;
      std::snprintf(line, sizeof line, "%7d %9zu %10.1f %10.1f %10.1f %10.1f %12.0f %6.2f\n",
                    clients, bytes, m["prefetch"]["p50_us"].get<double>(),
                    m["prefetch"]["p99_us"].get<double>(), m["ask"]["p50_us"].get<double>(), via,
                    m["prefetch"]["requests_per_s"].get<double>(),
                    row["prefetch_p50_over_via_director"].get<double>());
      table += line;
      out.push_back(std::move(row));
    }
  }
  return out;
}

// A step of one epoll thread (ring_loop.h), as many connections as clients, straight to the
// owners or all through the director (`via_director`).
nlohmann::json RunLoopStep(const client::RingClientOptions& o, const RingBenchOptions& options,
                           const std::vector<uint64_t>& newest, const Clock& clock, bool publish,
                           bool via_director) {
  RingClient probe(o, clock);
  auto table = probe.RefreshTable();
  if (!table.ok()) return {{"error", table.status().ToString()}};
  LoopOptions fl;
  fl.publish = publish;
  fl.connections = options.common.concurrency;
  fl.groups = options.groups;
  fl.clip_bytes = options.clip_bytes;
  fl.duration_s = options.common.duration_s;
  if (via_director) {
    fl.via_host = o.director_host;
    fl.via_port = o.ring_port;
  }
  auto r = RunLoop(**table, fl, newest, clock);
  return r.ok() ? *r : nlohmann::json{{"error", r.status().ToString()}};
}

// `key` of mode `a` over the same of mode `b`; 0 when either is missing (a failed step).
double Ratio(const nlohmann::json& modes, const char* a, const char* b, const char* key) {
  const nlohmann::json x = modes.value(a, nlohmann::json()), y = modes.value(b, nlohmann::json());
  if (!x.contains(key) || !y.contains(key) || !(y[key].get<double>() > 0)) return 0;
  return x[key].get<double>() / y[key].get<double>();
}

nlohmann::json Ratios(const nlohmann::json& m) {
  return {{"prefetch_p50_over_via_director", Ratio(m, "prefetch", "via_director", "p50_us")},
          {"prefetch_mean_over_via_director", Ratio(m, "prefetch", "via_director", "mean_us")},
          {"fetch_p50_over_via_director", Ratio(m, "fetch", "fetch_via_director", "p50_us")},
          {"fetch_loop_p50_over_via_director",
           Ratio(m, "fetch_loop", "fetch_loop_via_director", "p50_us")},
          {"publish_loop_p50_over_via_director",
           Ratio(m, "publish_loop", "publish_loop_via_director", "p50_us")},
          {"publish_loop_mean_over_via_director",
           Ratio(m, "publish_loop", "publish_loop_via_director", "mean_us")}};
}

// The request steps, side by side: publish in each mode, fingers, fetch (threads, through the
// director), and the event-loop steps (ring_loop.h); into `modes`.
Status RunRequestSteps(client::RingClientOptions o, const RingBenchOptions& options,
                       const Clock& clock, const ScenarioLog& log, nlohmann::json& modes) {
  const std::pair<const char*, RingMode> publish_modes[] = {
      {"prefetch", RingMode::kPrefetch},
      {"ask", RingMode::kAsk},
      {"via_director", RingMode::kViaDirector}};
  for (const auto& [name, mode] : publish_modes) {
    log(std::string("ring bench: mode ") + name);
    o.mode = mode;
    modes[name] =
        RunMode(o, Op::kPublish, options.common.concurrency, options.clip_bytes, options, clock);
  }
  log("ring bench: mode fingers");
  o.mode = RingMode::kPrefetch;
  modes["fingers"] =
      RunMode(o, Op::kFingers, options.common.concurrency, options.clip_bytes, options, clock);
  log("ring bench: fetch (the newest clip of a group, prefetch mode)");
  if (auto newest = PublishOneEach(o, options.groups, options.clip_bytes, clock); newest.ok()) {
    modes["fetch"] = RunMode(o, Op::kFetch, options.common.concurrency, options.clip_bytes, options,
                             clock, *newest);
    log("ring bench: fetch via the director");
    o.mode = RingMode::kViaDirector;
    modes["fetch_via_director"] = RunMode(o, Op::kFetch, options.common.concurrency,
                                          options.clip_bytes, options, clock, *newest);
    o.mode = RingMode::kPrefetch;
    for (const bool publish : {false, true}) {
      for (const bool via : {false, true}) {
        const std::string name =
            std::string(publish ? "publish" : "fetch") + "_loop" + (via ? "_via_director" : "");
        log("ring bench: " + name + " (one event loop, as redis-benchmark)");
        modes[name] = RunLoopStep(o, options, *newest, clock, publish, via);
      }
    }
  } else {
    return newest.status().Annotate("ring bench: before the fetch mode");
  }
  return Status::Ok();
}

}  // namespace

Result<ScenarioReport> RunRingBench(const RingBenchOptions& options, const Clock& clock,
                                    const ScenarioLog& log) {
  VSC_RETURN_IF_ERROR(EnsureResourceDb(options.common.db_path, options.common.records, log));
  LocalClusterOptions co;
  co.vsc_binary = options.common.vsc_binary;
  co.work_dir = options.common.work_dir.empty()
                    ? "/tmp/vsc-bench-ring-" + std::to_string(::getpid())
                    : options.common.work_dir;
  co.db_path = options.common.db_path;
  co.real_servers = options.nodes;
  co.relay = true;
  co.rs_workers = options.common.rs_workers;
  co.director_workers = options.common.director_workers;
  co.log_level = options.common.log_level;
  co.rs_extra_args = {"--relay-rate", "0"};  // the bench measures speed, not the rate bound
  VSC_ASSIGN_OR_RETURN(auto cluster, LocalCluster::Start(co));
  VSC_RETURN_IF_ERROR(cluster->WaitAllActive(std::chrono::seconds(20)));
  client::RingClientOptions o;
  o.ring_port = cluster->ring_port();
  o.timeout = std::chrono::milliseconds(static_cast<int64_t>(options.common.timeout_ms));
  {
    RingClient probe(o, clock);
    const TimePoint deadline = clock.Now() + std::chrono::seconds(20);
    for (;;) {
      auto t = probe.RefreshTable();
      if (t.ok() && (*t)->size() == static_cast<size_t>(options.nodes)) break;
      if (clock.Now() > deadline) return Unavailable("the ring did not reach all nodes in 20 s");
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  nlohmann::json report = {{"nodes", options.nodes},
                           {"clients", options.common.concurrency},
                           {"clip_bytes", options.clip_bytes},
                           {"duration_s", options.common.duration_s},
                           {"modes", nlohmann::json::object()}};
  VSC_RETURN_IF_ERROR(RunRequestSteps(o, options, clock, log, report["modes"]));
  std::string sweep_table;
  if (!options.sweep_clients.empty() && !options.sweep_clip_bytes.empty()) {
    report["sweep"] = RunSweep(o, options, clock, log, sweep_table);
  }
  if (options.fanout.subscribers > 0) {
    auto fanout = RunFanout(o, options.fanout, clock, log);
    report["fanout"] =
        fanout.ok() ? *fanout : nlohmann::json{{"error", fanout.status().ToString()}};
  }
  log("ring bench: kill step (SIGKILL of a busy group's owner)");
  report["kill"] = RunKillStep(*cluster, o, options.clip_bytes, clock);
  const auto& m = report["modes"];
  report["ratios"] = Ratios(m);
  cluster->Stop();
  ScenarioReport out;
  out.name = "ring";
  out.table = FormatRingReport(report, sweep_table);
  out.json = std::move(report);
  return out;
}

}  // namespace vsc::bench
