// vsc bench: load generators for the papers' experiments. `lookup` drives the resource lookup
// service over UDP (dr) or TCP, closed loop or at a fixed open-loop rate, and prints a progress
// line each second and a summary table (and writes JSON with --json). `write` drives the
// director's write port with inserts, updates, deletes or a mix, one statement or a batch per
// request, and reports committed writes/s and latency.
#include <charconv>
#include <cstdio>
#include <memory>
#include <string>

#include "bench/lookup_bench.h"
#include "bench/write_bench.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "cli/secrets.h"
#include "common/clock.h"

namespace vsc::cli {
namespace {

struct LookupFlags {
  bench::LookupBenchOptions options;
  std::string ids = "1-10";
  double timeout_ms = 200;
  JsonOutput json;
};

// "N" or "A-B" with 1 <= A <= B <= 10.
bool ParseIdRange(const std::string& text, int& lo, int& hi) {
  auto number = [](std::string_view s, int& out) {
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
    return ec == std::errc() && end == s.data() + s.size();
  };
  const size_t dash = text.find('-');
  if (dash == std::string::npos) {
    if (!number(text, lo)) return false;
    hi = lo;
  } else if (!number(std::string_view(text).substr(0, dash), lo) ||
             !number(std::string_view(text).substr(dash + 1), hi)) {
    return false;
  }
  return lo >= 1 && hi <= 10 && lo <= hi;
}

int RunLookup(LookupFlags& f) {
  if (!ParseIdRange(f.ids, f.options.min_ids, f.options.max_ids)) {
    std::fprintf(stderr,
                 "vsc bench lookup: --ids '%s' is not a count or range within 1-10 "
                 "(e.g. --ids 1-10 or --ids 5)\n",
                 f.ids.c_str());
    return 2;
  }
  f.options.timeout = Duration(static_cast<int64_t>(f.timeout_ms * 1e6));
  if (Status st = bench::CheckLookupBenchOptions(f.options); !st.ok()) {
    std::fprintf(stderr, "vsc bench lookup: %s\n", st.message().c_str());
    return 2;
  }
  const bench::LookupBenchOptions& o = f.options;
  std::FILE* out = f.json.human();
  std::fprintf(
      out, "bench lookup: %s, %s, %d workers, %d-%d ids/request, ids 1..%llu, %.1f s\n",
      o.target.c_str(),
      o.rate > 0
          ? ("open loop at " + std::to_string(static_cast<long long>(o.rate)) + " req/s").c_str()
          : "closed loop",
      o.concurrency, o.min_ids, o.max_ids, static_cast<unsigned long long>(o.max_id), o.duration_s);
  std::fflush(out);
  RealClock clock;
  auto report = bench::RunLookupBench(o, clock, [out](const bench::ProgressLine& line) {
    std::fprintf(out, "%s\n", line.ToString().c_str());
    std::fflush(out);
  });
  if (!report.ok()) {
    std::fprintf(stderr, "vsc bench lookup: %s\n", report.status().ToString().c_str());
    return 1;
  }
  std::fprintf(out, "\nsummary\n%s", report->SummaryTable().c_str());
  if (const std::string w = report->Warning(); !w.empty()) {
    std::fprintf(stderr, "vsc bench lookup: warning: %s\n", w.c_str());
  }
  if (Status st = WriteJson(f.json, report->ToJson()); !st.ok()) {
    std::fprintf(stderr, "vsc bench lookup: %s\n", st.message().c_str());
    return 1;
  }
  // Losing every request means nothing answered: say so with the exit code as well.
  return report->sent > 0 && report->answered == 0 ? 1 : 0;
}

struct WriteFlags {
  bench::WriteBenchOptions options;
  std::string op = "insert";
  std::string key_file;
  bool insecure = false;
  double timeout_ms = 10000;
  JsonOutput json;
};

int RunWrite(WriteFlags& f) {
  auto op = bench::ParseWriteOp(f.op);
  if (!op.ok()) {
    std::fprintf(stderr, "vsc bench write: %s\n", op.status().message().c_str());
    return 2;
  }
  f.options.op = *op;
  // --target is a URL in every bench (udp:// or tcp://); the write port is TCP.
  if (f.options.target.rfind("tcp://", 0) == 0) f.options.target.erase(0, 6);
  f.options.timeout = Duration(static_cast<int64_t>(f.timeout_ms * 1e6));
  if (Status st = bench::CheckWriteBenchOptions(f.options); !st.ok()) {
    std::fprintf(stderr, "vsc bench write: %s\n", st.message().c_str());
    return 2;
  }
  auto key = ResolveClusterKey(f.key_file, f.insecure);
  if (!key.ok()) {
    std::fprintf(stderr, "vsc bench write: %s\n", key.status().ToString().c_str());
    return 2;
  }
  const bench::WriteBenchOptions& o = f.options;
  std::FILE* out = f.json.human();
  std::fprintf(
      out, "bench write: %s, %s, %s, %d workers, %d statement(s)/request, %.1f s\n",
      o.target.c_str(), std::string(bench::WriteOpName(o.op)).c_str(),
      o.rate > 0
          ? ("open loop at " + std::to_string(static_cast<long long>(o.rate)) + " writes/s").c_str()
          : "closed loop",
      o.concurrency, o.batch, o.duration_s);
  std::fflush(out);
  RealClock clock;
  auto report = bench::RunWriteBench(o, *key, clock, [out](const bench::WriteProgress& p) {
    std::fprintf(out, "%s\n", p.ToString().c_str());
    std::fflush(out);
  });
  if (!report.ok()) {
    std::fprintf(stderr, "vsc bench write: %s\n", report.status().ToString().c_str());
    return 1;
  }
  std::fprintf(out, "\nsummary\n%s", report->SummaryTable().c_str());
  if (Status st = WriteJson(f.json, report->ToJson()); !st.ok()) {
    std::fprintf(stderr, "vsc bench write: %s\n", st.message().c_str());
    return 1;
  }
  return report->requests_sent > 0 && report->requests_ok == 0 ? 1 : 0;
}

}  // namespace

void AddBenchCommand(CLI::App& app) {
  auto* bench =
      app.add_subcommand("bench", "load generators: lookups, writes and the cluster experiments");
  bench->require_subcommand(1);

  auto f = std::make_shared<LookupFlags>();
  auto* lookup = bench->add_subcommand(
      "lookup",
      "resource lookups (1-10 ids per request) over UDP or TCP; reports rate, loss "
      "and latency percentiles");
  lookup->add_option("--target", f->options.target, "udp://HOST:PORT or tcp://HOST:PORT")
      ->required();
  lookup->add_option("--duration", f->options.duration_s, "seconds of sending")
      ->capture_default_str();
  lookup
      ->add_option("--concurrency", f->options.concurrency,
                   "worker threads (closed loop: requests outstanding)")
      ->capture_default_str();
  lookup->add_option("--ids", f->ids, "ids per request, N or A-B within 1-10")
      ->capture_default_str();
  lookup
      ->add_option("--rate", f->options.rate,
                   "open loop: requests/s over all workers, latency from the intended send "
                   "time (0 = closed loop)")
      ->capture_default_str();
  lookup->add_option("--max-id", f->options.max_id, "ids are drawn uniformly from 1..N")
      ->capture_default_str();
  AddMillisOption(lookup, "--timeout-ms", &f->timeout_ms,
                  "a request with no answer by then is lost");
  AddJsonOption(lookup, &f->json, "the report");
  lookup->add_option("--seed", f->options.seed, "seed of the id stream")->capture_default_str();
  lookup->callback([f] { ExitCode() = RunLookup(*f); });

  auto w = std::make_shared<WriteFlags>();
  auto* write = bench->add_subcommand(
      "write",
      "writes through the director's write port against the resources table; reports "
      "committed writes/s, errors and latency percentiles");
  write
      ->add_option("--target", w->options.target,
                   "tcp://HOST:PORT of the director's write port (HOST:PORT also accepted)")
      ->required();
  write->add_option("--op", w->op, "insert, update, delete or mixed")->capture_default_str();
  write
      ->add_option("--rate", w->options.rate,
                   "open loop: writes/s over all workers, latency from the intended send time "
                   "(0 = closed loop)")
      ->capture_default_str();
  write->add_option("--batch", w->options.batch, "statements per request, applied atomically")
      ->capture_default_str();
  write
      ->add_option("--concurrency", w->options.concurrency,
                   "connections (closed loop: requests outstanding)")
      ->capture_default_str();
  write->add_option("--duration", w->options.duration_s, "seconds of sending")
      ->capture_default_str();
  write
      ->add_option("--max-id", w->options.max_id,
                   "the loaded id range: updates and deletes pick ids in 1..N")
      ->capture_default_str();
  AddMillisOption(write, "--timeout-ms", &w->timeout_ms,
                  "a request with no answer by then is lost");
  AddKeyOptions(write, &w->key_file, &w->insecure);
  AddJsonOption(write, &w->json, "the report");
  write->add_option("--seed", w->options.seed, "seed of the id and value streams")
      ->capture_default_str();
  write->callback([w] { ExitCode() = RunWrite(*w); });
}

}  // namespace vsc::cli
