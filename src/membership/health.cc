#include "membership/health.h"

#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>

namespace vsc::membership {
namespace {

void AbortIfInvalid(const vservice::CheckConfig& config) {
  Status s = vservice::Validate(config);
  if (!s.ok()) {
    // stderr, not the logger: the process is about to die and the logger may buffer or be unset.
    fmt::print(stderr, "fatal: health check: {}\n", s.ToString());
    std::abort();
  }
}

void Require(bool condition, const char* what) {
  if (!condition) {
    fmt::print(stderr, "fatal: health check: {}\n", what);
    std::abort();
  }
}

}  // namespace

ProbeResult MiscExitResult(int exit_status, bool signaled, bool misc_dynamic) {
  if (signaled) return {false, fmt::format("killed by signal {}", exit_status - 128), {}};
  if (exit_status == 0) return {true, "exit status 0", {}};
  if (misc_dynamic && exit_status >= 2 && exit_status <= 255) {
    // check_misc.c: cur_weight = status - 2 (with one MISC_CHECK and no FILE_CHECK).
    return {true, fmt::format("exit status {}", exit_status),
            static_cast<uint32_t>(exit_status - 2)};
  }
  return {false, fmt::format("exit status {}", exit_status), {}};
}

HealthCheck::HealthCheck(const vservice::CheckConfig& config, std::string target, TimePoint start)
    : config_(config),
      target_(std::move(target)),
      up_(!config.alpha),
      retry_it_(config.alpha ? 0 : config.retry),
      next_due_(start) {
  AbortIfInvalid(config_);
}

TimePoint HealthCheck::Start(TimePoint now) {
  Require(Due(now), "Start() called while a probe is in flight or before it is due");
  in_flight_ = true;
  return now + vservice::ProbeTimeout(config_);
}

std::optional<HealthTransition> HealthCheck::OnResult(const ProbeResult& result, TimePoint now) {
  Require(in_flight_, "OnResult() called with no probe in flight");
  in_flight_ = false;
  ++checks_;
  auto transition = result.ok ? OnSuccess(result, now) : OnFailure(result, now);
  has_run_ = true;
  if (transition) ++transitions_;
  return transition;
}

std::optional<HealthTransition> HealthCheck::OnSuccess(const ProbeResult& result, TimePoint now) {
  retry_it_ = 0;
  failures_in_a_row_ = 0;
  next_due_ = now + config_.delay_loop;
  const std::optional<uint32_t> old_weight = weight_;
  if (result.weight) weight_ = result.weight;
  if (!up_) {
    up_ = true;
    return HealthTransition{true, true, weight_,
                            fmt::format("{} succeeded: {}", Name(), result.detail)};
  }
  if (weight_ != old_weight) {
    std::string was = old_weight ? std::to_string(*old_weight) : "the configured weight";
    return HealthTransition{
        true, false, weight_,
        fmt::format("{} set weight {} (was {}): {}", Name(), *weight_, was, result.detail)};
  }
  return std::nullopt;
}

std::optional<HealthTransition> HealthCheck::OnFailure(const ProbeResult& result, TimePoint now) {
  ++failures_;
  ++failures_in_a_row_;
  if (up_ && retry_it_ < config_.retry) {
    ++retry_it_;
    next_due_ = now + config_.delay_before_retry;
    return std::nullopt;
  }
  retry_it_ = 0;
  next_due_ = now + config_.delay_loop;
  if (!up_) return std::nullopt;
  up_ = false;
  const uint32_t retries = failures_in_a_row_ - 1;
  return HealthTransition{false, true, weight_,
                          fmt::format("{} failed after {} {}: {}", Name(), retries,
                                      retries == 1 ? "retry" : "retries", result.detail)};
}

void HealthCheck::Reconfigure(const vservice::CheckConfig& config, TimePoint now) {
  AbortIfInvalid(config);
  config_ = config;
  retry_it_ = has_run_ ? 0 : (config.alpha ? 0 : config.retry);
  failures_in_a_row_ = 0;
  if (!in_flight_) next_due_ = now;
}

std::string HealthCheck::Name() const {
  return fmt::format("{} on {}", vservice::CheckTypeName(config_.type), target_);
}

}  // namespace vsc::membership
