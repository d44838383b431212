// HealthCheck: the verdict of one active checker (TCP_CHECK, HTTP_GET, UDP_CHECK, MISC_CHECK) on
// a destination that runs no agent, with keepalived's semantics (check_tcp.c tcp_epilog,
// check_data.c; shared/reference/virtual_services.md §2.4). Pure: the shell runs the probe and
// reports its outcome with `now`.
//
// Verdict: per-checker retry, no "rise".
// - While UP, a failure is retried after delay_before_retry; the checker turns DOWN only when
//   `retry` retries have failed too (retry + 1 failures in a row).
// - While DOWN, one success turns it UP.
// - At start without `alpha` it is UP and one failure is enough (keepalived pre-sets
//   retry_it = retry: "for non alpha mode, one failure is enough initially"). With `alpha` it
//   starts DOWN and waits for a success.
// - MISC_CHECK with misc_dynamic: an exit status 2..255 is a success that sets the weight to
//   status - 2; the change is reported even when the verdict stays UP.
//
// Scheduling: the first check is due at `start`. After a result the next one is due
// delay_before_retry later when a retry is owed, delay_loop later otherwise (both counted from
// the result, as keepalived re-arms its timer in the epilog). Never more than one probe in
// flight: Start() requires Due(), and OnResult() requires a probe in flight; the shell ends a
// probe at the deadline Start() returned and reports that as a failure.
//
// Thread safety: none; owned by the director's control thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "common/clock.h"
#include "vservice/check_config.h"

namespace vsc::membership {

// What one probe found. `detail` says what happened ("connection refused", "HTTP status 503
// not in 200-299"); `weight` is set by a MISC_CHECK with misc_dynamic that exited 2..255.
struct ProbeResult {
  bool ok = false;
  std::string detail;
  std::optional<uint32_t> weight;
};

// The probe result for a MISC_CHECK command that exited with `exit_status` (0..255), or was
// killed by a signal (128 + signal, as Subprocess reports it, with `signaled`).
ProbeResult MiscExitResult(int exit_status, bool signaled, bool misc_dynamic);

// A change the table must apply: the verdict, and the dynamic weight if a MISC_CHECK set one.
struct HealthTransition {
  bool up = false;
  bool verdict_changed = false;  // false: only the weight changed, the verdict stays UP
  std::optional<uint32_t> weight;
  std::string reason;  // "TCP_CHECK on 10.0.0.1:80 failed after 3 retries: connection refused"
};

class HealthCheck {
 public:
  // `target` names the destination in reasons ("10.0.0.1:80"). Aborts if
  // vservice::Validate(config) is not ok: the caller validates configuration first.
  HealthCheck(const vservice::CheckConfig& config, std::string target, TimePoint start);

  // A probe should start now: none in flight and its time has come.
  bool Due(TimePoint now) const { return !in_flight_ && now >= next_due_; }

  // Records that a probe started; returns its deadline (now + ProbeTimeout). Requires Due(now).
  TimePoint Start(TimePoint now);

  // The outcome of the probe in flight. Returns the change to apply, if any.
  std::optional<HealthTransition> OnResult(const ProbeResult& result, TimePoint now);

  // New configuration for the same destination (a reload): the verdict, the weight and the
  // counters stay ("do not re-add failed RS instantly on reload"); a pending retry streak is
  // dropped and, when no probe is in flight, the next check is due at `now`.
  void Reconfigure(const vservice::CheckConfig& config, TimePoint now);

  // The next probe is due now rather than later (a passive check saw a connect fail); the
  // verdict, the retry streak and the configuration stay. No effect while a probe is in flight.
  void ExpediteNext(TimePoint now) {
    if (!in_flight_ && next_due_ > now) next_due_ = now;
  }

  bool up() const { return up_; }
  bool in_flight() const { return in_flight_; }
  TimePoint next_due() const { return next_due_; }
  std::optional<uint32_t> weight() const { return weight_; }
  uint32_t failures_in_a_row() const { return failures_in_a_row_; }
  uint64_t checks() const { return checks_; }
  uint64_t failures() const { return failures_; }
  uint64_t transitions() const { return transitions_; }
  const vservice::CheckConfig& config() const { return config_; }
  const std::string& target() const { return target_; }

 private:
  std::optional<HealthTransition> OnSuccess(const ProbeResult& result, TimePoint now);
  std::optional<HealthTransition> OnFailure(const ProbeResult& result, TimePoint now);
  std::string Name() const;

  vservice::CheckConfig config_;
  std::string target_;
  bool up_;
  bool in_flight_ = false;
  bool has_run_ = false;
  uint32_t retry_it_;  // retries made in the current failure streak while UP
  uint32_t failures_in_a_row_ = 0;
  TimePoint next_due_;
  std::optional<uint32_t> weight_;
  uint64_t checks_ = 0;
  uint64_t failures_ = 0;
  uint64_t transitions_ = 0;
};

}  // namespace vsc::membership
