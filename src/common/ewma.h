// An exponentially weighted moving average step, for response times that the schedulers read
// (a real server's own lookups, realserver/load_monitor.h; a destination's health-check probes,
// director/service_engine.h). The first sample (`old` == 0: nothing measured yet) is taken as is.
#pragma once

namespace vsc {

// `alpha` in (0, 1]: the weight of the new sample.
inline double EwmaStep(double old, double sample, double alpha) {
  return old == 0 ? sample : old + (sample - old) * alpha;
}

}  // namespace vsc
