#include "bench/replication_scenarios.h"

#include <fmt/format.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <memory>
#include <nlohmann/json.hpp>
#include <thread>
#include <vector>

#include "bench/local_cluster.h"
#include "bench/lookup_bench.h"
#include "bench/write_bench.h"
#include "common/subprocess.h"
#include "proto/cluster_key.h"

namespace vsc::bench {
namespace {

using json = nlohmann::json;

constexpr WriteOp kOps[] = {WriteOp::kInsert, WriteOp::kUpdate, WriteOp::kDelete};
constexpr double kTargetBatchedInsert = 100'000;
constexpr double kTargetBatchedUpdate = 50'000;
constexpr double kTargetSingle = 20'000;
constexpr double kTargetMixedPct = 95;

std::string Verdict(bool met) { return met ? "met" : "MISSED"; }

// Waits `ms` without a busy loop (shell code: the only time the scenario passes on purpose is
// while polling the admin API for convergence).
void Pause(int ms) { ::poll(nullptr, 0, ms); }

// Every replica IN_SYNC at the log's head: a step starts with no backlog from the previous one.
Status WaitConverged(LocalCluster& cluster, int replicas, const Clock& clock, Duration timeout) {
  const TimePoint deadline = clock.Now() + timeout;
  std::string last;
  for (;;) {
    auto rep = cluster.AdminGet("/v1/replication");
    if (rep.ok()) {
      last = rep->dump();
      const json& rs = (*rep)["replicas"];
      const uint64_t head = (*rep)["log"]["last_seq"].get<uint64_t>();
      bool done = rs.is_array() && static_cast<int>(rs.size()) == replicas;
      for (const json& r : rs) {
        if (r["replication"] != "IN_SYNC" || r["applied_seq"].get<uint64_t>() != head) done = false;
      }
      if (done) return Status::Ok();
    }
    if (clock.Now() >= deadline) {
      return Unavailable("the replicas did not converge: " +
                         (rep.ok() ? last : rep.status().ToString()));
    }
    Pause(50);
  }
}

// POST /v1/verify and poll its result until complete.
Result<json> Verify(LocalCluster& cluster, const Clock& clock) {
  VSC_ASSIGN_OR_RETURN(json started, cluster.AdminPost("/v1/verify", json::object()));
  const std::string target = "/v1/verify/" + std::to_string(started["seq"].get<uint64_t>());
  const TimePoint deadline = clock.Now() + std::chrono::seconds(60);
  for (;;) {
    auto r = cluster.AdminGet(target);
    if (r.ok() && r->value("complete", false)) return *r;
    if (clock.Now() >= deadline) return Unavailable("verify did not complete");
    Pause(50);
  }
}

// CPU time used so far by the director, the real servers together and this process.
struct Cpu {
  double director_s = 0, servers_s = 0, self_s = 0;
  Cpu operator-(const Cpu& o) const {
    return {director_s - o.director_s, servers_s - o.servers_s, self_s - o.self_s};
  }
};

double Secs(Duration d) { return std::chrono::duration<double>(d).count(); }

Result<Cpu> SampleCpu(LocalCluster& cluster) {
  Cpu c;
  VSC_ASSIGN_OR_RETURN(Duration d, ProcessCpuTime(cluster.director_pid()));
  c.director_s = Secs(d);
  for (int i = 0; i < cluster.size(); ++i) {
    VSC_ASSIGN_OR_RETURN(Duration s, ProcessCpuTime(cluster.server_pid(i)));
    c.servers_s += Secs(s);
  }
  VSC_ASSIGN_OR_RETURN(Duration self, ProcessCpuTime(::getpid()));
  c.self_s = Secs(self);
  return c;
}

json CpuJson(const Cpu& c, double seconds) {
  return {{"director_cores", c.director_s / seconds},
          {"servers_cores", c.servers_s / seconds},
          {"loadgen_cores", c.self_s / seconds}};
}

// The director's counters that show how writes were grouped (GET /v1/replication "batching").
struct Batching {
  double group_commits = 0, entries_sequenced = 0, replicate_messages = 0, acks = 0;
  double entries_sent = 0;  // summed over the replicas
};

Result<Batching> SampleBatching(LocalCluster& cluster) {
  VSC_ASSIGN_OR_RETURN(json rep, cluster.AdminGet("/v1/replication"));
  const json& b = rep["batching"];
  if (!b.is_object()) return Unavailable("the director reports no batching counters");
  Batching out;
  out.group_commits = b["group_commits"].get<double>();
  out.entries_sequenced = b["entries_sequenced"].get<double>();
  out.replicate_messages = b["replicate_messages"].get<double>();
  out.acks = b["acks"].get<double>();
  for (const json& r : rep["replicas"]) out.entries_sent += r["entries_sent"].get<double>();
  return out;
}

// Mean entries per log append (group commit), per Replicate message (fan-out batch) and per
// replica ack (a replica acks once per transaction: the apply batch) between two samples.
struct BatchSizes {
  double group_commit = 0, fan_out = 0, apply = 0;
  std::string Text() const {
    return fmt::format("{:.1f}/{:.1f}/{:.1f}", group_commit, fan_out, apply);
  }
  json Json() const {
    return {{"group_commit_entries", group_commit},
            {"fan_out_entries", fan_out},
            {"apply_batch_entries", apply}};
  }
};

BatchSizes SizesBetween(const Batching& a, const Batching& b) {
  auto ratio = [](double n, double d) { return d > 0 ? n / d : 0.0; };
  const double sent = b.entries_sent - a.entries_sent;
  return {ratio(b.entries_sequenced - a.entries_sequenced, b.group_commits - a.group_commits),
          ratio(sent, b.replicate_messages - a.replicate_messages), ratio(sent, b.acks - a.acks)};
}

// CPU cores in use over `seconds`, as "director/replicas/load generator".
std::string CoresText(const Cpu& c, double seconds) {
  if (seconds <= 0) return "-";
  return fmt::format("{:.2f}/{:.2f}/{:.2f}", c.director_s / seconds, c.servers_s / seconds,
                     c.self_s / seconds);
}

struct Step {
  std::string name;
  WriteBenchReport report;
  BatchSizes batches;
  Cpu cpu;  // used while the writes were sent
  double seconds = 0;
};

json StepJson(const Step& s) {
  json j = json::parse(s.report.ToJson());
  j["step"] = s.name;
  j["batches"] = s.batches.Json();
  j["cpu"] = CpuJson(s.cpu, s.seconds);
  return j;
}

}  // namespace

Status CheckReplicationBenchOptions(const ReplicationBenchOptions& o) {
  if (o.common.vsc_binary.empty()) return InvalidArgument("the path of vsc is needed");
  if (o.common.duration_s <= 0 || o.common.duration_s > 3600) {
    return InvalidArgument("duration must be above 0 and at most 3600 s");
  }
  if (o.real_servers < 1 || o.real_servers > 16) return InvalidArgument("real servers: 1 to 16");
  if (o.concurrency < 1 || o.batch_concurrency < 1) return InvalidArgument("concurrency >= 1");
  if (o.batch < 1) return InvalidArgument("batch must be at least 1");
  if (o.latency_load_pct <= 0 || o.latency_load_pct > 100) {
    return InvalidArgument("latency load must be above 0 and at most 100 %");
  }
  if (o.mixed_update_rate <= 0) return InvalidArgument("mixed update rate must be above 0");
  return Status::Ok();
}

Result<ScenarioReport> RunReplicationBench(const ReplicationBenchOptions& options,
                                           const Clock& clock, const ScenarioLog& log) {
  VSC_RETURN_IF_ERROR(CheckReplicationBenchOptions(options));
  const ScenarioOptions& o = options.common;
  VSC_RETURN_IF_ERROR(EnsureResourceDb(o.db_path, o.records, log));

  LocalClusterOptions co;
  co.vsc_binary = o.vsc_binary;
  co.work_dir = o.work_dir;
  co.db_path = o.db_path;
  co.real_servers = options.real_servers;
  co.director_workers = o.director_workers;
  co.rs_workers = o.rs_workers;
  co.log_level = o.log_level;
  co.replication = true;
  co.commit_policy = options.commit_policy;
  log(fmt::format(
      "replication: director + {} real servers, {} records each, policy {} (logs in {})",
      options.real_servers, o.records, options.commit_policy, o.work_dir));
  VSC_ASSIGN_OR_RETURN(auto cluster, LocalCluster::Start(co));
  VSC_RETURN_IF_ERROR(cluster->WaitAllActive(std::chrono::seconds(30)));
  const Duration converge = std::chrono::seconds(60);
  VSC_RETURN_IF_ERROR(WaitConverged(*cluster, options.real_servers, clock, converge));
  VSC_ASSIGN_OR_RETURN(auto key, proto::ClusterKey::FromFile(cluster->key_file()));
  const std::string write_target = "127.0.0.1:" + std::to_string(cluster->write_port());

  std::vector<Step> steps;
  uint64_t seed = 1;
  auto write_step = [&](const std::string& name, WriteOp op, int batch, int concurrency,
                        double rate) -> Result<WriteBenchReport> {
    WriteBenchOptions wo;
    wo.target = write_target;
    wo.op = op;
    wo.batch = batch;
    wo.concurrency = concurrency;
    wo.rate = rate;
    wo.duration_s = o.duration_s;
    wo.max_id = o.records;
    wo.seed = seed++;
    log(fmt::format("  {}: {} batch {} concurrency {}{} for {:.1f} s", name, WriteOpName(op), batch,
                    concurrency, rate > 0 ? fmt::format(" at {:.0f} writes/s", rate) : "",
                    o.duration_s));
    VSC_ASSIGN_OR_RETURN(Batching b0, SampleBatching(*cluster));
    VSC_ASSIGN_OR_RETURN(Cpu c0, SampleCpu(*cluster));
    const TimePoint t0 = clock.Now();
    VSC_ASSIGN_OR_RETURN(auto r, RunWriteBench(wo, key, clock, [&](const WriteProgress& p) {
                           log("    " + p.ToString());
                         }));
    VSC_ASSIGN_OR_RETURN(Cpu c1, SampleCpu(*cluster));
    const double secs = Secs(clock.Now() - t0);
    VSC_RETURN_IF_ERROR(WaitConverged(*cluster, options.real_servers, clock, converge));
    VSC_ASSIGN_OR_RETURN(Batching b1, SampleBatching(*cluster));
    const BatchSizes sizes = SizesBetween(b0, b1);
    log("    entries per log append / Replicate message / replica transaction: " + sizes.Text() +
        "; CPU cores director/replicas/load gen: " + CoresText(c1 - c0, secs));
    steps.push_back({name, r, sizes, c1 - c0, secs});
    return r;
  };

  // 1. One statement per request, closed loop.
  double single_max[3] = {0, 0, 0};
  BatchSizes single_sizes[3], batched_sizes[3];
  std::string single_cores[3] = {"-", "-", "-"}, batched_cores[3] = {"-", "-", "-"};
  const int write_ops = options.mixed_only ? 0 : 3;
  for (int i = 0; i < write_ops; ++i) {
    VSC_ASSIGN_OR_RETURN(auto r, write_step("single", kOps[i], 1, options.concurrency, 0));
    single_max[i] = r.writes_per_s;
    single_sizes[i] = steps.back().batches;
    single_cores[i] = CoresText(steps.back().cpu, steps.back().seconds);
  }
  // 2. Batching writers.
  double batched[3] = {0, 0, 0};
  for (int i = 0; i < write_ops; ++i) {
    VSC_ASSIGN_OR_RETURN(
        auto r, write_step("batched", kOps[i], options.batch, options.batch_concurrency, 0));
    batched[i] = r.writes_per_s;
    batched_sizes[i] = steps.back().batches;
    batched_cores[i] = CoresText(steps.back().cpu, steps.back().seconds);
  }
  // 3. Latency at a fixed share of each op's single-statement maximum.
  WriteBenchReport latency[3];
  for (int i = 0; i < write_ops; ++i) {
    const double rate = std::max(1.0, single_max[i] * options.latency_load_pct / 100);
    VSC_ASSIGN_OR_RETURN(latency[i], write_step("latency", kOps[i], 1, options.concurrency, rate));
  }

  // 4. Mixed: lookups through the director alone, then under a steady update flow.
  LookupBenchOptions lo;
  lo.target = "udp://127.0.0.1:" + std::to_string(cluster->lookup_port());
  lo.duration_s = o.duration_s;
  lo.concurrency = o.concurrency;
  lo.min_ids = o.min_ids;
  lo.max_ids = o.max_ids;
  lo.max_id = o.records;
  lo.timeout = std::chrono::microseconds(static_cast<int64_t>(o.timeout_ms * 1000));
  log(fmt::format("  mixed: lookups alone ({} workers) for {:.1f} s", lo.concurrency,
                  lo.duration_s));
  VSC_ASSIGN_OR_RETURN(Cpu ro0, SampleCpu(*cluster));
  const TimePoint ro_start = clock.Now();
  VSC_ASSIGN_OR_RETURN(auto read_only, RunLookupBench(lo, clock, [](const ProgressLine&) {}));
  VSC_ASSIGN_OR_RETURN(Cpu ro1, SampleCpu(*cluster));
  const double ro_secs = Secs(clock.Now() - ro_start);
  log(fmt::format("    {:.0f} lookups/s", read_only.lookups_per_s));

  WriteBenchOptions bg;
  bg.target = write_target;
  bg.op = WriteOp::kUpdate;
  bg.rate = options.mixed_update_rate;
  bg.concurrency = 4;
  bg.duration_s = o.duration_s + 1;  // covers the whole lookup period
  bg.max_id = o.records;
  bg.seed = seed++;
  Result<WriteBenchReport> updates = Unavailable("not run");
  std::thread updater(
      [&] { updates = RunWriteBench(bg, key, clock, [](const WriteProgress&) {}); });
  // The updates start first so the lookups see them from their first second.
  Pause(500);
  log(fmt::format("  mixed: lookups while {:.0f} updates/s flow", options.mixed_update_rate));
  auto mx0 = SampleCpu(*cluster);
  auto mixed_b0 = SampleBatching(*cluster);
  const TimePoint mx_start = clock.Now();
  auto mixed = RunLookupBench(lo, clock, [](const ProgressLine&) {});
  auto mx1 = SampleCpu(*cluster);
  auto mixed_b1 = SampleBatching(*cluster);
  const double mx_secs = Secs(clock.Now() - mx_start);
  updater.join();
  VSC_RETURN_IF_ERROR(mx0.status());
  VSC_RETURN_IF_ERROR(mx1.status());
  VSC_RETURN_IF_ERROR(mixed.status());
  VSC_RETURN_IF_ERROR(updates.status());
  VSC_RETURN_IF_ERROR(mixed_b0.status());
  VSC_RETURN_IF_ERROR(mixed_b1.status());
  const BatchSizes mixed_sizes = SizesBetween(*mixed_b0, *mixed_b1);
  log(fmt::format("    {:.0f} lookups/s, {:.0f} updates/s committed", mixed->lookups_per_s,
                  updates->writes_per_s));
  VSC_RETURN_IF_ERROR(WaitConverged(*cluster, options.real_servers, clock, converge));
  const double mixed_pct =
      read_only.lookups_per_s > 0 ? 100 * mixed->lookups_per_s / read_only.lookups_per_s : 0;

  // 5. Every replica equal at the end.
  VSC_ASSIGN_OR_RETURN(json verify, Verify(*cluster, clock));
  cluster->Stop();

  // ---- the table ----
  std::string t = fmt::format(
      "replication: director + {} real servers, {} records, policy {}, {:.1f} s per step, "
      "{} CPUs online\n",
      options.real_servers, o.records, options.commit_policy, o.duration_s,
      std::thread::hardware_concurrency());
  t += fmt::format("  {:<34} {:>12} {:>12} {:>12}\n", "committed writes/s", "insert", "update",
                   "delete");
  t += fmt::format("  {:<34} {:>12.0f} {:>12.0f} {:>12.0f}\n",
                   fmt::format("single, concurrency {}", options.concurrency), single_max[0],
                   single_max[1], single_max[2]);
  t += fmt::format("  {:<34} {:>12} {:>12} {:>12}\n", "  % of target 20000",
                   fmt::format("{:.1f} %", 100 * single_max[0] / kTargetSingle),
                   fmt::format("{:.1f} %", 100 * single_max[1] / kTargetSingle),
                   fmt::format("{:.1f} %", 100 * single_max[2] / kTargetSingle));
  t += fmt::format("  {:<34} {:>12} {:>12} {:>12}\n", "  entries/append, /message, /txn",
                   single_sizes[0].Text(), single_sizes[1].Text(), single_sizes[2].Text());
  t += fmt::format("  {:<34} {:>12} {:>12} {:>12}\n", "  CPU cores dir/replicas/load gen",
                   single_cores[0], single_cores[1], single_cores[2]);
  t +=
      fmt::format("  {:<34} {:>12.0f} {:>12.0f} {:>12.0f}\n",
                  fmt::format("batch {}, concurrency {}", options.batch, options.batch_concurrency),
                  batched[0], batched[1], batched[2]);
  t += fmt::format("  {:<34} {:>12} {:>12} {:>12}\n", "  % of target 100000 / 50000 / -",
                   fmt::format("{:.1f} %", 100 * batched[0] / kTargetBatchedInsert),
                   fmt::format("{:.1f} %", 100 * batched[1] / kTargetBatchedUpdate), "-");
  t += fmt::format("  {:<34} {:>12} {:>12} {:>12}\n", "  entries/append, /message, /txn",
                   batched_sizes[0].Text(), batched_sizes[1].Text(), batched_sizes[2].Text());
  t += fmt::format("  {:<34} {:>12} {:>12} {:>12}\n", "  CPU cores dir/replicas/load gen",
                   batched_cores[0], batched_cores[1], batched_cores[2]);
  t += fmt::format("  {:<34} {:>12} {:>12} {:>12}\n",
                   fmt::format("p50 / p99 µs at {:.0f} % of single", options.latency_load_pct),
                   fmt::format("{:.0f}/{:.0f}", latency[0].p50_us, latency[0].p99_us),
                   fmt::format("{:.0f}/{:.0f}", latency[1].p50_us, latency[1].p99_us),
                   fmt::format("{:.0f}/{:.0f}", latency[2].p50_us, latency[2].p99_us));
  t += fmt::format("  {:<34} {:>12.0f} {:>12.0f} {:>12.0f}\n", "  offered writes/s",
                   latency[0].rate, latency[1].rate, latency[2].rate);
  t += fmt::format("  {:<34} {:>12.0f} {:>12.0f} {:>12.0f}\n", "  committed writes/s",
                   latency[0].writes_per_s, latency[1].writes_per_s, latency[2].writes_per_s);
  uint64_t errors = 0, lost = 0;
  for (const Step& s : steps) {
    errors += s.report.error_answers;
    lost += s.report.lost;
  }
  t += fmt::format("  {:<34} {:>12} {:>12}\n", "error answers / lost requests", errors, lost);
  t += fmt::format("  {:<34} {:>12.0f}\n", "lookups/s through the director",
                   read_only.lookups_per_s);
  t += fmt::format("  {:<34} {:>12.0f}   ({:.0f} updates/s committed)\n",
                   fmt::format("  while {:.0f} updates/s flow", options.mixed_update_rate),
                   mixed->lookups_per_s, updates->writes_per_s);
  t += fmt::format("  {:<34} {:>11.1f} %   ({:.1f} % of the 95 % target)\n", "  ratio", mixed_pct,
                   100 * mixed_pct / kTargetMixedPct);
  t += fmt::format("  {:<34} {:>12}\n", "  entries/append, /message, /txn", mixed_sizes.Text());
  const Cpu ro_cpu = ro1 - ro0, mx_cpu = *mx1 - *mx0;
  t += fmt::format("  {:<34} {:>12} {:>12} {:>12}\n", "CPU cores in use", "director",
                   "real servers", "load gen");
  t +=
      fmt::format("  {:<34} {:>12.2f} {:>12.2f} {:>12.2f}\n", "  lookups alone",
                  ro_cpu.director_s / ro_secs, ro_cpu.servers_s / ro_secs, ro_cpu.self_s / ro_secs);
  t +=
      fmt::format("  {:<34} {:>12.2f} {:>12.2f} {:>12.2f}\n", "  lookups + updates",
                  mx_cpu.director_s / mx_secs, mx_cpu.servers_s / mx_secs, mx_cpu.self_s / mx_secs);
  t += fmt::format("  {:<34} {}\n", "lookups per RS CPU-second",
                   "see `vsc bench rs-lookup` (target 100000; one RS alone, 2,000,000 records)");
  t += fmt::format("  {:<34} {:>12}\n", "verify (every replica equal)",
                   verify.value("ok", false) ? "OK" : "MISMATCH");
  const double worst_single = *std::min_element(single_max, single_max + 3);
  const bool batched_met = batched[0] >= kTargetBatchedInsert && batched[1] >= kTargetBatchedUpdate;
  const bool single_met = worst_single >= kTargetSingle;
  const bool mixed_met = mixed_pct >= kTargetMixedPct;
  if (!options.mixed_only) {
    t += fmt::format("  target batched >= 100000 inserts/s and >= 50000 updates/s: {}\n",
                     Verdict(batched_met));
    t += fmt::format(
        "  target >= 20000 committed writes/s single at concurrency {} (every op): {}\n",
        options.concurrency, Verdict(single_met));
  }
  t += fmt::format("  target mixed >= 95 % of read-only: {}\n", Verdict(mixed_met));

  ScenarioReport r;
  r.name = "replication";
  r.table = std::move(t);
  json step_json = json::array();
  for (const Step& s : steps) step_json.push_back(StepJson(s));
  r.json = {{"scenario", r.name},
            {"options",
             {{"db", o.db_path},
              {"records", o.records},
              {"duration_s", o.duration_s},
              {"real_servers", options.real_servers},
              {"commit_policy", options.commit_policy},
              {"concurrency", options.concurrency},
              {"batch", options.batch},
              {"batch_concurrency", options.batch_concurrency},
              {"latency_load_pct", options.latency_load_pct},
              {"mixed_update_rate", options.mixed_update_rate},
              {"mixed_only", options.mixed_only},
              {"lookup_concurrency", o.concurrency},
              {"cpus_online", std::thread::hardware_concurrency()}}},
            {"single_writes_per_s",
             {{"insert", single_max[0]}, {"update", single_max[1]}, {"delete", single_max[2]}}},
            {"batched_writes_per_s",
             {{"insert", batched[0]}, {"update", batched[1]}, {"delete", batched[2]}}},
            {"mixed",
             {{"read_only_lookups_per_s", read_only.lookups_per_s},
              {"mixed_lookups_per_s", mixed->lookups_per_s},
              {"updates_per_s", updates->writes_per_s},
              {"ratio_pct", mixed_pct},
              {"batches", mixed_sizes.Json()},
              {"cpu_read_only", CpuJson(ro1 - ro0, ro_secs)},
              {"cpu_mixed", CpuJson(*mx1 - *mx0, mx_secs)},
              {"read_only", json::parse(read_only.ToJson())},
              {"with_updates", json::parse(mixed->ToJson())},
              {"updates", json::parse(updates->ToJson())}}},
            {"steps", step_json},
            {"verify", verify},
            {"targets",
             {{"batched_met", batched_met}, {"single_met", single_met}, {"mixed_met", mixed_met}}}};
  return r;
}

}  // namespace vsc::bench
