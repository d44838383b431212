// Stats: sums the per-worker counters for the admin API, and estimates rates (connections,
// packets and bytes per second) from the change between two samples, as IPVS's estimator does
// for `ipvsadm -L --rate`. Owned by the control thread.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/clock.h"
#include "director/counters.h"

namespace vsc::director {

struct Totals {
  uint64_t conns = 0, in_packets = 0, out_packets = 0, in_bytes = 0, out_bytes = 0, active = 0;
  Totals& operator+=(const Totals& o);
};

struct Rates {
  double cps = 0, in_pps = 0, out_pps = 0, in_bps = 0, out_bps = 0;
};

// Sums of the worker counters.
Totals SumServer(const std::vector<WorkerCounters*>& workers, int service, uint32_t slot);
Totals SumService(const std::vector<WorkerCounters*>& workers, int service);

// Keeps the previous sample of each keyed series; Update() computes the rate since it.
class RateEstimator {
 public:
  void Update(const std::string& key, const Totals& now_totals, TimePoint now);
  Rates Get(const std::string& key) const;

 private:
  struct Sample {
    Totals totals;
    TimePoint at;
    Rates rates;
  };
  std::map<std::string, Sample> samples_;
};

}  // namespace vsc::director
