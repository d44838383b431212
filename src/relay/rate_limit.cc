#include "relay/rate_limit.h"

#include <algorithm>

namespace vsc::relay {

TokenBucket::TokenBucket(double rate, double burst, TimePoint now)
    : rate_(rate), burst_(std::max(burst, 1.0)), tokens_(burst_), last_(now) {}

bool TokenBucket::Take(TimePoint now) {
  if (rate_ <= 0) return true;
  if (now > last_) {
    const double seconds = std::chrono::duration<double>(now - last_).count();
    tokens_ = std::min(burst_, tokens_ + seconds * rate_);
    last_ = now;
  }
  if (tokens_ < 1) return false;
  tokens_ -= 1;
  return true;
}

}  // namespace vsc::relay
