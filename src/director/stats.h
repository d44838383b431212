// Stats: the totals of a service or destination runtime record, and rates (connections, packets
// and bytes per second) estimated from the change between two samples, as IPVS's estimator does
// for `ipvsadm -L --rate`. Owned by the control thread.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/clock.h"
#include "director/service_editor.h"

namespace vsc::director {

struct Totals {
  uint64_t conns = 0, in_packets = 0, out_packets = 0, in_bytes = 0, out_bytes = 0, active = 0;
  Totals& operator+=(const Totals& o);
};

struct Rates {
  double cps = 0, in_pps = 0, out_pps = 0, in_bps = 0, out_bps = 0;
};

// The totals a runtime record shows (a destination's with its active connections).
Totals ServiceTotals(const ServiceRuntime& r);
Totals DestTotals(const DestRuntime& d);

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
