// Clocks. Everything time-driven takes `now` as a parameter or a Clock&; only main() and the
// I/O shell construct a RealClock. Tests use ManualClock and advance it explicitly.
//
// Thread safety: RealClock is stateless. ManualClock is safe to read from several threads while
// one thread advances it (the time is an atomic).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

namespace vsc {

using Duration = std::chrono::nanoseconds;
// A monotonic instant (steady clock, nanoseconds since an arbitrary epoch).
using TimePoint = std::chrono::time_point<std::chrono::steady_clock, Duration>;

class Clock {
 public:
  virtual ~Clock() = default;
  // Monotonic time, for timeouts and rates.
  virtual TimePoint Now() const = 0;
  // Wall-clock time in microseconds since the Unix epoch, for timestamps that leave the process.
  virtual int64_t WallMicros() const = 0;
};

class RealClock final : public Clock {
 public:
  TimePoint Now() const override;
  int64_t WallMicros() const override;
};

// The process's one RealClock, for code that was given no clock.
const Clock& DefaultClock();

class ManualClock final : public Clock {
 public:
  explicit ManualClock(TimePoint start = TimePoint(std::chrono::seconds(1000)),
                       int64_t wall_micros = 1'700'000'000'000'000)
      : now_ns_(start.time_since_epoch().count()), wall_offset_(wall_micros) {}

  TimePoint Now() const override { return TimePoint(Duration(now_ns_.load())); }
  int64_t WallMicros() const override { return wall_offset_ + elapsed_ns_.load() / 1000; }

  void Advance(Duration d) {
    now_ns_.fetch_add(d.count());
    elapsed_ns_.fetch_add(d.count());
  }

 private:
  std::atomic<int64_t> now_ns_;
  std::atomic<int64_t> elapsed_ns_{0};
  int64_t wall_offset_;
};

inline double ToSeconds(Duration d) { return std::chrono::duration<double>(d).count(); }
inline double ToMillis(Duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

}  // namespace vsc
