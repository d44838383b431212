#include "membership/health.h"

#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>

namespace vsc::membership {

Status ValidateHealthCheckConfig(const HealthCheckConfig& config) {
  if (config.interval <= Duration::zero()) {
    return InvalidArgument("health check: interval must be positive");
  }
  if (config.timeout <= Duration::zero()) {
    return InvalidArgument("health check: timeout must be positive");
  }
  if (config.rise < 1) return InvalidArgument("health check: rise must be at least 1");
  if (config.fall < 1) return InvalidArgument("health check: fall must be at least 1");
  return Status::Ok();
}

HealthCheck::HealthCheck(HealthCheckConfig config, TimePoint start)
    : config_(config), next_due_(start) {
  Status s = ValidateHealthCheckConfig(config_);
  if (!s.ok()) {
    // stderr, not the logger: the process is about to die and the logger may buffer or be unset.
    fmt::print(stderr, "fatal: {}\n", s.ToString());
    std::abort();
  }
}

bool HealthCheck::Due(TimePoint now) const { return !in_flight_ && now >= next_due_; }

TimePoint HealthCheck::Start(TimePoint now) {
  in_flight_ = true;
  deadline_ = now + config_.timeout;
  next_due_ = now + config_.interval;
  return deadline_;
}

std::optional<bool> HealthCheck::OnResult(bool ok, TimePoint now) {
  if (in_flight_) {
    in_flight_ = false;
    if (ok && now > deadline_) {
      ok = false;
      ++late_;
    }
  } else {
    next_due_ = now + config_.interval;
  }
  ++checks_;
  if (ok) {
    failures_ = 0;
    ++successes_;
    if (!up_ && successes_ >= static_cast<uint64_t>(config_.rise)) {
      up_ = true;
      return true;
    }
  } else {
    successes_ = 0;
    ++failures_;
    if (up_ && failures_ >= static_cast<uint64_t>(config_.fall)) {
      up_ = false;
      return false;
    }
  }
  return std::nullopt;
}

}  // namespace vsc::membership
