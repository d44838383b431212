#include "realserver/load_monitor.h"

#include <cstdio>

#include "common/ewma.h"
#include "common/file_text.h"

namespace vsc::realserver {

Result<LoadAvg> ParseLoadavg(std::string_view text) {
  LoadAvg l;
  std::string s(text);
  unsigned long last_pid = 0;
  int n = std::sscanf(s.c_str(), "%lf %lf %lf %u/%u %lu", &l.load1, &l.load5, &l.load15,
                      &l.runnable, &l.total, &last_pid);
  if (n != 6) return InvalidArgument("cannot parse /proc/loadavg: '" + s + "'");
  return l;
}

Result<LoadAvg> ReadLoadavg(const std::string& path) {
  VSC_ASSIGN_OR_RETURN(std::string text, ReadFileText(path));
  return ParseLoadavg(text);
}

void LoadTracker::End(uint32_t requests, double micros) {
  in_flight_.fetch_sub(requests, std::memory_order_relaxed);
  // EWMA with alpha 1/16; a lost update under a race only delays convergence a little.
  double old = ewma_ms_.load(std::memory_order_relaxed);
  double ms = micros / 1000.0;
  ewma_ms_.store(EwmaStep(old, ms, 1.0 / 16), std::memory_order_relaxed);
}

}  // namespace vsc::realserver
