#include <cstdio>

#include "bench/ring_bench.h"

namespace vsc::bench {

std::string FormatRingReport(const nlohmann::json& report, const std::string& sweep_table) {
  const auto& m = report["modes"];
  char line[320];
  std::snprintf(line, sizeof line, "%-26s %10s %10s %10s %12s %8s\n", "mode", "mean_us", "p50_us",
                "p99_us", "requests/s", "errors");
  std::string table = line;
  for (const char* name :
       {"prefetch", "ask", "via_director", "fingers", "fetch", "fetch_via_director", "fetch_loop",
        "fetch_loop_via_director", "publish_loop", "publish_loop_via_director"}) {
    const auto& r = m.value(name, nlohmann::json());
    if (!r.contains("p50_us")) continue;
    std::snprintf(line, sizeof line, "%-26s %10.1f %10.1f %10.1f %12.0f %8llu\n", name,
                  r["mean_us"].get<double>(), r["p50_us"].get<double>(), r["p99_us"].get<double>(),
                  r["requests_per_s"].get<double>(),
                  static_cast<unsigned long long>(r["errors"].get<uint64_t>()));
    table += line;
  }
  std::snprintf(line, sizeof line,
                "prefetch / via-director: publish p50 %.2f, mean %.2f; fetch p50 %.2f; from one "
                "event loop: publish p50 %.2f, mean %.2f, fetch p50 %.2f; fingers: %.2f hops on "
                "average\n",
                report["ratios"]["prefetch_p50_over_via_director"].get<double>(),
                report["ratios"]["prefetch_mean_over_via_director"].get<double>(),
                report["ratios"]["fetch_p50_over_via_director"].get<double>(),
                report["ratios"]["publish_loop_p50_over_via_director"].get<double>(),
                report["ratios"]["publish_loop_mean_over_via_director"].get<double>(),
                report["ratios"]["fetch_loop_p50_over_via_director"].get<double>(),
                m["fingers"]["mean_hops"].get<double>());
  table += line;
  if (!sweep_table.empty()) {
    table +=
        "sweep: clients, clip bytes, prefetch p50 and p99, ask p50, via-director p50 "
        "(µs), prefetch publishes/s, prefetch/via-director p50\n" +
        sweep_table;
  }
  if (const auto& f = report.value("fanout", nlohmann::json()); f.contains("p99_us")) {
    std::snprintf(line, sizeof line,
                  "fan-out: %llu subscribers (%llu held) over %d groups, %llu publishes: "
                  "publish->delivery p50 %.0f us, p99 %.0f us, max %.0f us; %llu of %llu "
                  "deliveries lost, %llu errors\n",
                  static_cast<unsigned long long>(f["subscribers"].get<uint64_t>()),
                  static_cast<unsigned long long>(f["held"].get<uint64_t>()),
                  f["groups"].get<int>(),
                  static_cast<unsigned long long>(f["publishes"].get<uint64_t>()),
                  f["p50_us"].get<double>(), f["p99_us"].get<double>(), f["max_us"].get<double>(),
                  static_cast<unsigned long long>(f["lost"].get<uint64_t>()),
                  static_cast<unsigned long long>(f["expected_deliveries"].get<uint64_t>()),
                  static_cast<unsigned long long>(f["errors"].get<uint64_t>()));
    table += line;
  } else if (f.contains("error")) {
    table += "fan-out: " + f["error"].get<std::string>() + "\n";
  }
  const auto& k = report["kill"];
  if (k.contains("acked")) {
    std::snprintf(line, sizeof line,
                  "kill step: %s killed after 200 acks; %llu acked in all, %llu lost; longest "
                  "pause between acks %.0f ms\n",
                  k["killed"].get<std::string>().c_str(),
                  static_cast<unsigned long long>(k["acked"].get<uint64_t>()),
                  static_cast<unsigned long long>(k["acked_lost"].get<uint64_t>()),
                  k["failover_ms"].get<double>());
    table += line;
  }
  return table;
}

}  // namespace vsc::bench
