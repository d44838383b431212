#include "common/clock.h"

namespace vsc {

TimePoint RealClock::Now() const {
  return std::chrono::time_point_cast<Duration>(std::chrono::steady_clock::now());
}

int64_t RealClock::WallMicros() const {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

const Clock& DefaultClock() {
  static const RealClock clock;
  return clock;
}

}  // namespace vsc
