// The load a real server reports in its heartbeats (DESIGN §5): run-queue length from
// /proc/loadavg (seed 004 schedules on the CPU run-queue length), requests in flight, and the
// response-time EWMA of its own lookups.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"

namespace vsc::realserver {

struct LoadAvg {
  double load1 = 0, load5 = 0, load15 = 0;
  uint32_t runnable = 0;  // scheduling entities runnable now (4th field, before the slash)
  uint32_t total = 0;     // scheduling entities in all (4th field, after the slash)
};

// Parses the text of /proc/loadavg ("0.20 0.18 0.12 1/80 11206").
Result<LoadAvg> ParseLoadavg(std::string_view text);
Result<LoadAvg> ReadLoadavg(const std::string& path = "/proc/loadavg");

// Shared between the service workers (writers) and the agent (reader): lock-free.
class LoadTracker {
 public:
  // Accounts per batch of requests, not per request, to keep atomics off the per-request path.
  void Begin(uint32_t requests) { in_flight_.fetch_add(requests, std::memory_order_relaxed); }
  // Ends `requests` requests whose mean service time was `micros`; folds it into the EWMA.
  void End(uint32_t requests, double micros);
  uint32_t in_flight() const { return in_flight_.load(std::memory_order_relaxed); }
  double response_ms() const { return ewma_ms_.load(std::memory_order_relaxed); }

 private:
  std::atomic<uint32_t> in_flight_{0};
  std::atomic<double> ewma_ms_{0};
};

}  // namespace vsc::realserver
