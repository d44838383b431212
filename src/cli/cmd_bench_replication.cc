// vsc bench replication: the replicated-database benchmark (bench/replication_scenarios.h).
// Starts its own cluster (director + real servers with replication) on 127.0.0.1, prints its
// steps while they run, then a table of figures; --json writes the figures as JSON.
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

#include "bench/replication_scenarios.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "common/clock.h"
#include "common/subprocess.h"

namespace vsc::cli {

void AddBenchReplicationCommands(CLI::App& bench) {
  struct State {
    bench::ReplicationBenchOptions options;
    JsonOutput json;
    bool keep_work_dir = false;
  };
  auto st = std::make_shared<State>();
  st->options.common.records = 1'000'000;
  st->options.common.db_path = "/tmp/vsc-bench-resources-1m.db";
  st->options.common.concurrency = 8;
  auto* cmd = bench.add_subcommand(
      "replication",
      "replicated databases: committed writes/s (single and batched), write latency at a fixed "
      "rate, lookups/s with and without an update flow, final verify");
  bench::ReplicationBenchOptions& o = st->options;
  cmd->add_option("--db", o.common.db_path, "resource database; built when missing, reused otherwise")
      ->capture_default_str();
  cmd->add_option("--records", o.common.records, "records in the database")->capture_default_str();
  cmd->add_option("--duration", o.common.duration_s, "seconds of sending per step")
      ->capture_default_str();
  cmd->add_option("--real-servers", o.real_servers, "replicas")->capture_default_str();
  cmd->add_option("--commit-policy", o.commit_policy, "all, majority or one")->capture_default_str();
  cmd->add_option("--concurrency", o.concurrency, "writers with one statement per request")
      ->capture_default_str();
  cmd->add_option("--batch", o.batch, "statements per request in the batched step")
      ->capture_default_str();
  cmd->add_option("--batch-concurrency", o.batch_concurrency, "writers in the batched step")
      ->capture_default_str();
  cmd->add_option("--latency-load-pct", o.latency_load_pct,
                  "fixed rate of the latency step, in % of the single-statement maximum")
      ->capture_default_str();
  cmd->add_option("--mixed-update-rate", o.mixed_update_rate, "updates/s during the mixed step")
      ->capture_default_str();
  cmd->add_flag("--mixed-only", o.mixed_only,
                "only the mixed step and the final verify (the write figures print as 0)");
  cmd->add_option("--lookup-concurrency", o.common.concurrency, "lookup load generator threads")
      ->capture_default_str();
  cmd->add_option("--director-workers", o.common.director_workers, "director data-plane threads")
      ->capture_default_str();
  cmd->add_option("--rs-workers", o.common.rs_workers, "service threads per real server")
      ->capture_default_str();
  cmd->add_option("--work-dir", o.common.work_dir,
                  "logs, keys, replica copies (default /tmp/vsc-bench-repl-PID, removed after a "
                  "successful run)");
  cmd->add_flag("--keep-work-dir", st->keep_work_dir, "keep the work directory after success");
  cmd->add_option("--log-level", o.common.log_level, "log level of the director and real servers")
      ->capture_default_str();
  AddJsonOption(cmd, &st->json, "the figures");
  cmd->callback([st] {
    bench::ReplicationBenchOptions& o = st->options;
    const bool default_dir = o.common.work_dir.empty();
    if (default_dir) o.common.work_dir = "/tmp/vsc-bench-repl-" + std::to_string(::getpid());
    o.common.vsc_binary = SelfExecutable();
    RealClock clock;
    std::FILE* out = st->json.human();
    auto report = bench::RunReplicationBench(o, clock, [out](const std::string& line) {
      std::fprintf(out, "%s\n", line.c_str());
      std::fflush(out);
    });
    if (!report.ok()) {
      std::fprintf(stderr, "vsc bench replication: %s (logs in %s)\n",
                   report.status().ToString().c_str(), o.common.work_dir.c_str());
      ExitCode() = 1;
      return;
    }
    std::fprintf(out, "\n%s", report->table.c_str());
    if (Status s = WriteJson(st->json, report->json); !s.ok()) {
      std::fprintf(stderr, "vsc bench replication: %s\n", s.message().c_str());
      ExitCode() = 1;
      return;
    }
    if (default_dir && !st->keep_work_dir) {
      std::error_code ec;
      std::filesystem::remove_all(o.common.work_dir, ec);
    }
    ExitCode() = 0;
  });
}

}  // namespace vsc::cli
