// HealthCheck: the verdict of active checks (TCP connect, HTTP GET) on a server that runs no
// agent, keepalived-style. Pure: the shell runs the probe and reports the outcome with `now`.
//
// Counting: a server is DOWN until `rise` consecutive successes make it UP; an UP server turns
// DOWN after `fall` consecutive failures. Any other outcome resets the opposite streak, so a
// flapping server does not change state.
//
// Start state, chosen on purpose: DOWN. This is keepalived's `alpha` mode ("on daemon startup
// assume that all RSs are down and healthchecks failed"), not its default (assume up). A server
// that has never answered gets no traffic; the cost is `rise * interval` before its first flow.
//
// Scheduling: the first check is due at `start`; later checks are due `interval` after the start
// of the previous one, and never while one is in flight. The shell must report every started
// check exactly once; its own timer ends a probe at the deadline Start returned and reports a
// failure. A success reported after that deadline counts as a failure (the answer was too late).
//
// Thread safety: none; owned by the director's control thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>

#include "common/clock.h"
#include "common/status.h"

namespace vsc::membership {

struct HealthCheckConfig {
  Duration interval = std::chrono::seconds(2);
  Duration timeout = std::chrono::seconds(1);
  int rise = 2;  // consecutive successes to become UP
  int fall = 3;  // consecutive failures to become DOWN
};

// Ok, or InvalidArgument naming the field: interval and timeout positive, rise and fall >= 1.
Status ValidateHealthCheckConfig(const HealthCheckConfig& config);

class HealthCheck {
 public:
  // Aborts if ValidateHealthCheckConfig(config) is not ok.
  HealthCheck(HealthCheckConfig config, TimePoint start);

  // A probe should start now: none in flight and the interval since the last start has passed.
  bool Due(TimePoint now) const;

  // Records that a probe started; returns its deadline (now + timeout).
  TimePoint Start(TimePoint now);

  // The outcome of the probe in flight (or of an unscheduled probe, if none was started).
  // Returns the new verdict if it changed (true = became UP, false = became DOWN), else nullopt.
  std::optional<bool> OnResult(bool ok, TimePoint now);

  bool up() const { return up_; }
  bool in_flight() const { return in_flight_; }
  TimePoint next_due() const { return next_due_; }
  uint64_t successes_in_a_row() const { return successes_; }
  uint64_t failures_in_a_row() const { return failures_; }
  uint64_t checks() const { return checks_; }
  uint64_t late_results() const { return late_; }
  const HealthCheckConfig& config() const { return config_; }

 private:
  HealthCheckConfig config_;
  bool up_ = false;
  bool in_flight_ = false;
  TimePoint deadline_;
  TimePoint next_due_;
  uint64_t successes_ = 0;
  uint64_t failures_ = 0;
  uint64_t checks_ = 0;
  uint64_t late_ = 0;
};

}  // namespace vsc::membership
