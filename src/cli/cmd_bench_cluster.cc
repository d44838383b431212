// vsc bench director-cpu | rs-lookup | scaling | loss: the core-cluster benchmark scenarios
// (bench/scenarios.h). Each starts its own cluster of child processes on 127.0.0.1, prints its
// steps while they run, then a table of figures, and writes the figures as JSON with --json.
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

#include "bench/ring_bench.h"
#include "bench/scenarios.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "common/clock.h"
#include "common/subprocess.h"

namespace vsc::cli {
namespace {

struct CommonFlags {
  JsonOutput json;
  bool keep_work_dir = false;
};

void AddCommonFlags(CLI::App* cmd, bench::ScenarioOptions& o, CommonFlags& f) {
  cmd->add_option("--db", o.db_path, "resource database; built when missing, reused otherwise")
      ->capture_default_str();
  cmd->add_option("--records", o.records, "records in the database")->capture_default_str();
  cmd->add_option("--duration", o.duration_s, "seconds of sending per step")->capture_default_str();
  cmd->add_option("--concurrency", o.concurrency, "load generator worker threads")
      ->capture_default_str();
  cmd->add_option("--director-workers", o.director_workers, "director data-plane threads")
      ->capture_default_str();
  cmd->add_option("--rs-workers", o.rs_workers, "service threads per real server")
      ->capture_default_str();
  AddMillisOption(cmd, "--timeout-ms", &o.timeout_ms, "a request with no answer by then is lost");
  cmd->add_option("--work-dir", o.work_dir,
                  "logs, keys and ready files of the clusters (default /tmp/vsc-bench-PID, "
                  "removed after a successful run)");
  cmd->add_flag("--keep-work-dir", f.keep_work_dir, "keep the work directory after success");
  cmd->add_option("--log-level", o.log_level, "log level of the director and real servers")
      ->capture_default_str();
  AddJsonOption(cmd, &f.json, "the figures");
}

// Runs one scenario with the shared options filled in, prints its table, writes its JSON.
int Finish(const std::string& name, bench::ScenarioOptions& o, const CommonFlags& f,
           const std::function<Result<bench::ScenarioReport>(const Clock&,
                                                             const bench::ScenarioLog&)>& run) {
  const bool default_dir = o.work_dir.empty();
  if (default_dir) o.work_dir = "/tmp/vsc-bench-" + std::to_string(::getpid());
  o.vsc_binary = SelfExecutable();
  RealClock clock;
  std::FILE* out = f.json.human();
  auto report = run(clock, [out](const std::string& line) {
    std::fprintf(out, "%s\n", line.c_str());
    std::fflush(out);
  });
  if (!report.ok()) {
    std::fprintf(stderr, "vsc bench %s: %s (logs in %s)\n", name.c_str(),
                 report.status().ToString().c_str(), o.work_dir.c_str());
    return 1;
  }
  std::fprintf(out, "\n%s", report->table.c_str());
  if (Status s = WriteJson(f.json, report->json); !s.ok()) {
    std::fprintf(stderr, "vsc bench %s: %s\n", name.c_str(), s.message().c_str());
    return 1;
  }
  if (default_dir && !f.keep_work_dir) {
    std::error_code ec;
    std::filesystem::remove_all(o.work_dir, ec);
  }
  return 0;
}

}  // namespace

void AddBenchClusterCommands(CLI::App& bench) {
  {
    struct State {
      bench::RingBenchOptions options;
      CommonFlags flags;
    };
    auto st = std::make_shared<State>();
    st->options.common.concurrency = 10;
    st->options.common.duration_s = 3;
    st->options.common.records = 1000;
    st->options.common.timeout_ms = 2000;
    st->options.common.db_path = "/tmp/vsc-bench-ring.db";
    auto* cmd = bench.add_subcommand(
        "ring",
        "the clip relay: publish round trips in prefetch, ask and via-director mode and along "
        "the fingers, side by side (--concurrency = clients)");
    AddCommonFlags(cmd, st->options.common, st->flags);
    cmd->add_option("--nodes", st->options.nodes, "relay nodes")->capture_default_str();
    cmd->add_option("--clip-bytes", st->options.clip_bytes, "bytes per clip (1-65536)")
        ->capture_default_str();
    cmd->add_option("--groups", st->options.groups, "groups the clients publish to")
        ->capture_default_str();
    cmd->add_option("--sweep-clients", st->options.sweep_clients,
                    "also run prefetch, ask and via-director for each of these client counts "
                    "(e.g. 10,100,1000) times each --sweep-clip-bytes")
        ->delimiter(',');
    cmd->add_option("--sweep-clip-bytes", st->options.sweep_clip_bytes,
                    "clip sizes of the sweep (e.g. 1024,16384,65536)")
        ->delimiter(',')
        ->check(CLI::Range(size_t{1}, size_t{65536}));
    cmd->add_option("--fanout-subscribers", st->options.fanout.subscribers,
                    "concurrent subscribers of the fan-out step, one connection each (0: no "
                    "fan-out step)")
        ->capture_default_str();
    cmd->add_option("--fanout-groups", st->options.fanout.groups,
                    "groups of the fan-out step; each gets one publish per second")
        ->capture_default_str();
    cmd->add_option("--fanout-duration", st->options.fanout.duration_s,
                    "measured seconds of the fan-out step (after a 1 s warm-up)")
        ->capture_default_str();
    cmd->callback([st] {
      ExitCode() = Finish("ring", st->options.common, st->flags,
                          [st](const Clock& c, const bench::ScenarioLog& log) {
                            return bench::RunRingBench(st->options, c, log);
                          });
    });
  }
  {
    struct State {
      bench::DirectorCpuOptions options;
      CommonFlags flags;
    };
    auto st = std::make_shared<State>();
    st->options.common.concurrency = 4;
    auto* cmd = bench.add_subcommand(
        "director-cpu",
        "director CPU per forwarded request and its share of the cluster's CPU at a fixed rate, "
        "next to a bare recvmmsg/sendmmsg forwarder");
    AddCommonFlags(cmd, st->options.common, st->flags);
    cmd->add_option("--rate", st->options.rate, "offered requests/s")->capture_default_str();
    cmd->add_option("--rounds", st->options.rounds,
                    "alternations of director and bare forwarder (figures are summed)")
        ->capture_default_str();
    cmd->callback([st] {
      ExitCode() = Finish("director-cpu", st->options.common, st->flags,
                          [st](const Clock& c, const bench::ScenarioLog& log) {
                            return bench::RunDirectorCpu(st->options, c, log);
                          });
    });
  }
  {
    struct State {
      bench::RsLookupOptions options;
      CommonFlags flags;
    };
    auto st = std::make_shared<State>();
    st->options.common.concurrency = 8;
    auto* cmd = bench.add_subcommand(
        "rs-lookup", "one real server alone, closed loop: requests/s and requests per CPU-second");
    AddCommonFlags(cmd, st->options.common, st->flags);
    cmd->callback([st] {
      ExitCode() = Finish("rs-lookup", st->options.common, st->flags,
                          [st](const Clock& c, const bench::ScenarioLog& log) {
                            return bench::RunRsLookup(st->options, c, log);
                          });
    });
  }
  {
    struct State {
      bench::ScalingOptions options;
      CommonFlags flags;
    };
    auto st = std::make_shared<State>();
    st->options.common.concurrency = 32;
    auto* cmd = bench.add_subcommand(
        "scaling",
        "throughput of 1 real server alone, then director + 1..N real servers, each held to the "
        "same CPU quota (cgroup v1 cpu; needs root)");
    AddCommonFlags(cmd, st->options.common, st->flags);
    cmd->add_option("--max-rs", st->options.max_rs, "most real servers")->capture_default_str();
    cmd->add_option("--quota", st->options.quota, "CPUs per real server")->capture_default_str();
    cmd->callback([st] {
      ExitCode() = Finish("scaling", st->options.common, st->flags,
                          [st](const Clock& c, const bench::ScenarioLog& log) {
                            return bench::RunScaling(st->options, c, log);
                          });
    });
  }
  {
    struct State {
      bench::LossOptions options;
      CommonFlags flags;
    };
    auto st = std::make_shared<State>();
    auto* cmd = bench.add_subcommand(
        "loss",
        "closed-loop maximum through the director, then loss and latency at fixed offered loads "
        "of 25-125 % of it");
    AddCommonFlags(cmd, st->options.common, st->flags);
    cmd->add_option("--loads", st->options.load_pcts, "offered loads, % of the maximum")
        ->capture_default_str();
    cmd->callback([st] {
      ExitCode() = Finish("loss", st->options.common, st->flags,
                          [st](const Clock& c, const bench::ScenarioLog& log) {
                            return bench::RunLoss(st->options, c, log);
                          });
    });
  }
}

}  // namespace vsc::cli
