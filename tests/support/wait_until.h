// WaitUntil: the tests' one way to wait for a condition — poll it with a deadline, never sleep
// for a guessed time. Header-only, for unit and integration tests alike.
#pragma once

#include <poll.h>

#include <algorithm>
#include <chrono>
#include <functional>

#include "common/clock.h"

namespace vsc::test_support {

// Polls `ready` until it returns true or `timeout` passes; pauses `every` between polls. Returns
// whether it became true. For waiting on a condition only, never to pass time.
inline bool WaitUntil(const std::function<bool()>& ready, Duration timeout,
                      Duration every = std::chrono::milliseconds(5)) {
  RealClock clock;
  const TimePoint deadline = clock.Now() + timeout;
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(every).count();
  const int pause = static_cast<int>(std::clamp<int64_t>(ms, 0, 60'000));
  for (;;) {
    if (ready()) return true;
    if (clock.Now() >= deadline) return false;
    ::poll(nullptr, 0, pause);
  }
}

}  // namespace vsc::test_support
