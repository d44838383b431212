// vsc demo: a whole cluster on this machine, end to end (README's `make demo`):
// key, resource database, director + N real servers as child processes, the ipvsadm-style
// listing, lookup load through the director in dr mode, a real server killed with SIGKILL in the
// middle and restarted, a summary, and every child stopped. Exits 0 when the cluster behaved.
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <thread>

#include "bench/local_cluster.h"
#include "bench/lookup_bench.h"
#include "bench/write_bench.h"
#include "cli/commands.h"
#include "cli/demo_output.h"
#include "cli/demo_ring.h"
#include "cli/verify.h"
#include "common/clock.h"
#include "common/subprocess.h"
#include "director/listing.h"
#include "proto/cluster_key.h"
#include "store/resource_builder.h"

namespace vsc::cli {
namespace {

using namespace std::chrono_literals;

struct DemoOptions {
  int real_servers = 4;
  uint64_t records = 2'000'000;
  double duration_s = 12;
  int concurrency = 8;
  std::string dir = "demo-run";
  std::string scheduler = "wlc";
  bool ring = false;  // the ring part instead (demo_ring.h)
  RingDemoOptions ring_options;
};

int RunDemo(const DemoOptions& o) {
  RealClock clock;
  const TimePoint demo_start = clock.Now();
  Heading("vscluster demo");
  Say("A director and %d real servers on 127.0.0.1, each with its own replica of a %llu-record\n"
      "resource database (which content node holds each resource); lookups sent to the\n"
      "director and answered by the real servers directly (dr mode); one real server killed with\n"
      "SIGKILL mid-run, a burst of replicated writes while it is down, its restart and catch-up,\n"
      "and a verification that every replica holds the same data.\n",
      o.real_servers, static_cast<unsigned long long>(o.records));

  std::error_code ec;
  std::filesystem::create_directories(o.dir, ec);
  const std::string dir = std::filesystem::absolute(o.dir).string();
  const std::string db = dir + "/resources.db";

  Heading("1. resource database");
  store::BuildOptions bo;
  bo.path = db;
  bo.records = o.records;
  bo.nodes = 64;
  bo.overwrite = true;
  const TimePoint build_start = clock.Now();
  int last_pct = -1;
  auto built = store::BuildResourceDb(bo, [&](uint64_t done, uint64_t total) {
    int pct = total ? static_cast<int>(done * 100 / total) : 100;
    if (pct / 10 != last_pct / 10) {
      Say("  %3d%%  %llu records\n", pct, static_cast<unsigned long long>(done));
      last_pct = pct;
    }
  });
  if (!built.ok()) {
    std::fprintf(stderr, "demo: %s\n", built.status().ToString().c_str());
    return 1;
  }
  Say("  %llu records in %.1f s -> %s\n", static_cast<unsigned long long>(built->records),
      ToSeconds(clock.Now() - build_start), db.c_str());

  Heading("2. cluster");
  bench::LocalClusterOptions co;
  co.vsc_binary = SelfExecutable();
  co.work_dir = dir;
  co.db_path = db;
  co.real_servers = o.real_servers;
  co.scheduler = o.scheduler;
  co.log_level = "info";
  co.replication = true;
  auto started = bench::LocalCluster::Start(co);
  if (!started.ok()) {
    std::fprintf(stderr, "demo: %s\n", started.status().ToString().c_str());
    return 1;
  }
  std::unique_ptr<bench::LocalCluster> cluster = std::move(started).value();
  if (Status s = cluster->WaitAllActive(10s); !s.ok()) {
    std::fprintf(stderr, "demo: %s\n", s.ToString().c_str());
    return 1;
  }
  Say("  director pid %d: lookups udp+tcp 127.0.0.1:%u, admin 127.0.0.1:%u (token in %s)\n",
      cluster->director_pid(), cluster->lookup_port(), cluster->admin_port(),
      (dir + "/director-admin.token").c_str());
  for (int i = 0; i < cluster->size(); ++i) {
    Say("  %s pid %d: lookups 127.0.0.1:%u, http 127.0.0.1:%u\n", cluster->server_id(i).c_str(),
        cluster->server_pid(i), cluster->server_lookup_port(i), cluster->server_http_port(i));
  }
  Say("  logs: %s/*.log\n\n$ vsc adm list\n", dir.c_str());
  if (auto st = cluster->AdminGet("/v1/status"); st.ok()) {
    Say("%s", director::RenderListing(*st, director::ListingMode::kTable).c_str());
  }

  Heading("3. lookup load through the director, with a failure");
  const int victim = cluster->size() > 1 ? 1 : 0;
  const std::string victim_id = cluster->server_id(victim);
  Say("  %d closed-loop clients, 1-10 ids per request, %.0f s; %s is killed at %.0f s and\n"
      "  restarted at %.0f s\n",
      o.concurrency, o.duration_s, victim_id.c_str(), o.duration_s / 3, 2 * o.duration_s / 3);
  bench::LookupBenchOptions lo;
  lo.target = "udp://127.0.0.1:" + std::to_string(cluster->lookup_port());
  lo.duration_s = o.duration_s;
  lo.concurrency = o.concurrency;
  lo.max_id = o.records + o.records / 100;  // about 1 % of ids are not found, on purpose
  Result<bench::LookupBenchReport> report = Internal("bench did not run");
  std::thread load([&] {
    report = bench::RunLookupBench(
        lo, clock, [](const bench::ProgressLine& p) { Say("  %s\n", p.ToString().c_str()); });
  });

  double detect_ms = -1, rejoin_ms = -1;
  const TimePoint load_start = clock.Now();
  // The demo follows a timeline: these are points in time, not conditions to poll for.
  auto wait_until = [&](double s) {
    std::this_thread::sleep_until(std::chrono::steady_clock::time_point(
        std::chrono::duration_cast<std::chrono::steady_clock::duration>(
            (load_start + std::chrono::duration_cast<Duration>(std::chrono::duration<double>(s)))
                .time_since_epoch())));
  };
  wait_until(o.duration_s / 3);
  const TimePoint killed_at = clock.Now();
  Say("  >>> kill -9 %s (pid %d)\n", victim_id.c_str(), cluster->server_pid(victim));
  (void)cluster->SignalServer(victim, SIGKILL);
  if (cluster->WaitForState(victim_id, "DOWN", 5s).ok()) {
    detect_ms = ToMillis(clock.Now() - killed_at);
    Say("  >>> director marked %s DOWN after %.0f ms (its control session closed)\n",
        victim_id.c_str(), detect_ms);
  } else {
    Say("  >>> %s was NOT marked DOWN within 5 s\n", victim_id.c_str());
  }
  // A burst of replicated writes while the victim is down: they commit on the others (it is
  // DOWN, so it does not count for the commit policy) and it must catch up after its restart.
  Result<bench::WriteBenchReport> writes = Internal("write burst did not run");
  auto key = proto::ClusterKey::FromHex(cluster->key_hex());
  if (key.ok()) {
    bench::WriteBenchOptions wo;
    wo.target = "127.0.0.1:" + std::to_string(cluster->write_port());
    wo.op = bench::WriteOp::kMixed;
    wo.concurrency = 4;
    wo.duration_s = std::max(1.0, o.duration_s / 6);
    wo.max_id = o.records;
    Say("  >>> write burst while %s is down: mixed insert/update/delete, %d writers, %.0f s\n",
        victim_id.c_str(), wo.concurrency, wo.duration_s);
    writes = bench::RunWriteBench(wo, *key, clock, [](const bench::WriteProgress&) {});
    if (writes.ok()) {
      Say("  >>> %llu writes committed on the %d live replicas (last seq %llu), %llu refused\n",
          static_cast<unsigned long long>(writes->committed_writes), cluster->size() - 1,
          static_cast<unsigned long long>(writes->last_seq),
          static_cast<unsigned long long>(writes->error_answers));
    } else {
      Say("  >>> write burst failed: %s\n", writes.status().ToString().c_str());
    }
  }
  wait_until(2 * o.duration_s / 3);
  const TimePoint restart_at = clock.Now();
  Say("  >>> restarting %s\n", victim_id.c_str());
  if (Status s = cluster->RestartServer(victim); !s.ok()) {
    Say("  >>> restart failed: %s\n", s.ToString().c_str());
  } else if (cluster->WaitForState(victim_id, "ACTIVE", 5s).ok()) {
    rejoin_ms = ToMillis(clock.Now() - restart_at);
    Say("  >>> %s caught up from the log and is ACTIVE again %.0f ms after restart\n",
        victim_id.c_str(), rejoin_ms);
  }
  load.join();

  Heading("4. summary");
  Say("$ vsc adm list --stats\n");
  auto status = cluster->AdminGet("/v1/status");
  if (status.ok()) {
    Say("%s", director::RenderListing(*status, director::ListingMode::kStats).c_str());
  }
  bool ok = report.ok() && detect_ms >= 0 && rejoin_ms >= 0;
  if (report.ok()) {
    const auto& r = *report;
    Say("\n  %-34s %s\n", "target", r.target.c_str());
    Say("  %-34s %llu sent, %llu answered, %llu lost (%.3f %%)\n", "requests",
        static_cast<unsigned long long>(r.sent), static_cast<unsigned long long>(r.answered),
        static_cast<unsigned long long>(r.lost), r.loss_pct);
    Say("  %-34s %.0f requests/s, %.0f lookups/s\n", "throughput", r.requests_per_s,
        r.lookups_per_s);
    Say("  %-34s p50 %.0f  p99 %.0f  p99.9 %.0f  max %.0f\n", "latency (us)", r.p50_us, r.p99_us,
        r.p999_us, r.max_us);
    Say("  %-34s %llu of %llu ids found\n", "lookups", static_cast<unsigned long long>(r.found),
        static_cast<unsigned long long>(r.lookups));
    // Requests lost are the ones in flight to the victim before the director saw it go: a
    // handful, never a run of seconds.
    if (r.answered == 0 || r.loss_pct > 1.0 || r.errors > 0) ok = false;
  }
  Say("  %-34s %.0f ms\n", "kill -9 detected (DOWN) after", detect_ms);
  Say("  %-34s %.0f ms\n", "restart to ACTIVE (caught up) after", rejoin_ms);
  if (writes.ok()) {
    Say("  %-34s %llu committed (%.0f/s), p50 %.0f us, p99 %.0f us\n",
        "writes while a replica was down",
        static_cast<unsigned long long>(writes->committed_writes), writes->writes_per_s,
        writes->p50_us, writes->p99_us);
  }
  if (status.ok()) {
    Say("  %-34s", "requests per real server (UDP)");
    for (const auto& s : (*status)["services"][0]["servers"]) {
      Say(" %s=%llu", s["id"].get<std::string>().c_str(),
          static_cast<unsigned long long>(s["stats"]["conns"].get<uint64_t>()));
    }
    Say("\n");
  }
  if (auto m = cluster->AdminGet("/metrics"); m.ok() && m->is_string()) {
    const std::string text = m->get<std::string>();
    auto pos = text.find("\nvsc_replies_seen_total ");
    if (pos != std::string::npos) {
      Say("  %-34s %s", "replies seen by the director (dr)",
          text.substr(pos + 24, text.find('\n', pos + 1) - pos - 23).c_str());
    }
  }

  Heading("5. verify: every replica's content at one sequenced point");
  Say("$ vsc adm verify\n");
  bool verified = false;
  auto v = AwaitVerification(
      [&](const std::string& t, const nlohmann::json& b) { return cluster->AdminPost(t, b); },
      [&](const std::string& t) { return cluster->AdminGet(t); }, std::chrono::seconds(20));
  if (v.ok()) {
    for (const auto& r : (*v)["replicas"]) {
      Say("  %-6s %s  %s\n", r["id"].get<std::string>().c_str(),
          r["checksum"].get<std::string>().c_str(), r["status"].get<std::string>().c_str());
    }
    verified = v->value("complete", false) && v->value("ok", false);
    Say("  at seq %llu: %s\n", static_cast<unsigned long long>((*v)["seq"].get<uint64_t>()),
        verified ? "every replica is identical" : "NOT identical");
  } else {
    Say("  verify failed: %s\n", v.status().ToString().c_str());
  }
  if (!verified || !writes.ok() || writes->committed_writes == 0) ok = false;

  Heading("6. stopping");
  cluster->Stop();
  Say("  every child stopped; the whole demo took %.1f s\n", ToSeconds(clock.Now() - demo_start));
  Say("\nresult: %s\n", ok ? "OK" : "FAILED");
  if (!report.ok()) std::fprintf(stderr, "demo: bench: %s\n", report.status().ToString().c_str());
  return ok ? 0 : 1;
}

}  // namespace

void AddDemoCommand(CLI::App& app) {
  auto* cmd = app.add_subcommand("demo", "start a whole cluster on this machine and exercise it");
  auto o = std::make_shared<DemoOptions>();
  cmd->add_option("--real-servers", o->real_servers, "real servers to start")
      ->capture_default_str()
      ->check(CLI::Range(1, 16));
  cmd->add_option("--records", o->records, "resource records")->capture_default_str();
  cmd->add_option("--duration", o->duration_s, "seconds of load")->capture_default_str();
  cmd->add_option("--concurrency", o->concurrency, "closed-loop clients")->capture_default_str();
  cmd->add_option("--dir", o->dir, "work directory (database, key, logs)")->capture_default_str();
  cmd->add_option("--scheduler", o->scheduler, "director scheduler")->capture_default_str();
  cmd->add_flag("--ring", o->ring,
                "the ring part instead: 6 relay nodes on a Chord ring, talkers and listeners, a "
                "node killed and one joining mid-run");
  cmd->add_option("--ring-duration", o->ring_options.duration_s, "seconds of talking (--ring)")
      ->capture_default_str();
  cmd->callback([o] {
    if (o->ring) {
      o->ring_options.dir = o->dir;
      ExitCode() = RunRingDemo(o->ring_options);
    } else {
      ExitCode() = RunDemo(*o);
    }
  });
}

}  // namespace vsc::cli
