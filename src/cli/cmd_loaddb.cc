// vsc loaddb: builds a resource database (DESIGN.md §10) of N deterministic records, with a
// progress bar on stderr, so every real server can start from the same data.
#include <unistd.h>

#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "common/clock.h"
#include "store/resource_builder.h"

namespace vsc::cli {
namespace {

struct LoaddbState {
  store::BuildOptions options;
};

// Draws "[=====>    ]  45.0%  900000/2000000 records  612345 rec/s  ETA 1.8 s" on stderr.
// On a terminal the line is redrawn in place (\r) at most ten times a second; otherwise one
// plain line is written per tenth of the work, so logs stay short.
class ProgressBar {
 public:
  ProgressBar(const Clock& clock, bool tty) : clock_(clock), tty_(tty), start_(clock.Now()) {}

  void Update(uint64_t done, uint64_t total) {
    const TimePoint now = clock_.Now();
    const bool last = done >= total;
    if (tty_) {
      if (!last && drawn_ && now - last_draw_ < std::chrono::milliseconds(100)) return;
    } else {
      const uint64_t decile = total == 0 ? 10 : done * 10 / total;
      if (drawn_ && decile == last_decile_) return;
      last_decile_ = decile;
    }
    drawn_ = true;
    last_draw_ = now;

    const double seconds = ToSeconds(now - start_);
    const double fraction =
        total == 0 ? 1.0 : static_cast<double>(done) / static_cast<double>(total);
    const double rate = seconds > 0 ? static_cast<double>(done) / seconds : 0.0;
    char eta[32] = "ETA --";
    if (rate > 0) {
      std::snprintf(eta, sizeof eta, "ETA %.1f s", static_cast<double>(total - done) / rate);
    }
    constexpr int kWidth = 30;
    std::string bar(kWidth, ' ');
    const int filled = static_cast<int>(fraction * kWidth);
    for (int i = 0; i < filled; ++i) bar[i] = '=';
    if (filled < kWidth) bar[filled] = '>';
    std::fprintf(stderr, "%s[%s] %5.1f%%  %" PRIu64 "/%" PRIu64 " records  %.0f rec/s  %s%s",
                 tty_ ? "\r" : "", bar.c_str(), fraction * 100.0, done, total, rate, eta,
                 tty_ ? "   " : "\n");
    if (tty_ && last) std::fputc('\n', stderr);
    std::fflush(stderr);
  }

 private:
  const Clock& clock_;
  const bool tty_;
  const TimePoint start_;
  TimePoint last_draw_{};
  bool drawn_ = false;
  uint64_t last_decile_ = 0;
};

int RunLoaddb(const LoaddbState& st) {
  RealClock clock;
  ProgressBar bar(clock, ::isatty(STDERR_FILENO) == 1);
  const TimePoint start = clock.Now();
  Result<store::BuildStats> stats = store::BuildResourceDb(
      st.options, [&bar](uint64_t done, uint64_t total) { bar.Update(done, total); });
  if (!stats.ok()) {
    std::fprintf(stderr, "vsc loaddb: %s\n", stats.status().ToString().c_str());
    return 1;
  }
  const double seconds = ToSeconds(clock.Now() - start);
  std::printf("loaddb: %" PRIu64 " records (%u nodes, seed %" PRIu64
              ") written to %s in %.2f s "
              "(%.0f records/s), %.1f MiB\n",
              stats->records, st.options.nodes, st.options.seed, st.options.path.c_str(), seconds,
              seconds > 0 ? static_cast<double>(stats->records) / seconds : 0.0,
              static_cast<double>(stats->file_bytes) / (1024.0 * 1024.0));
  return 0;
}

}  // namespace

void AddLoaddbCommand(CLI::App& app) {
  auto st = std::make_shared<LoaddbState>();
  auto* cmd = app.add_subcommand(
      "loaddb", "build a resource database of deterministic records (same seed, same content)");
  cmd->add_option("--out", st->options.path, "database file to create")->required();
  cmd->add_option("--records", st->options.records, "number of resources (ids 1..N)")
      ->capture_default_str();
  cmd->add_option("--nodes", st->options.nodes, "number of content nodes the resources are spread over")
      ->check(CLI::Range(uint32_t{1}, uint32_t{1'000'000}))
      ->capture_default_str();
  cmd->add_option("--seed", st->options.seed, "seed of the content; same seed, same records")
      ->capture_default_str();
  cmd->add_flag("--force", st->options.overwrite, "replace the --out file if it exists");
  cmd->callback([st] { ExitCode() = RunLoaddb(*st); });
}

}  // namespace vsc::cli
