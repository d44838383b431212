// HealthChecker: runs the active health checks of the director's destinations (keepalived's
// TCP_CHECK, HTTP_GET, UDP_CHECK, MISC_CHECK) as coroutines on the control thread's
// io_context, each verdict kept by a pure membership::HealthCheck.
//
// Every probe is asynchronous and bounded by its timeout, so thousands of checks never block
// the thread. Each change of verdict (or of a misc_dynamic weight) is logged with its reason,
// counted, and reported through the callback, on the control thread.
//
// Thread safety: none; every call, and the callback, on the io_context's thread. Lifetime: the
// checker may be destroyed while probes are in flight; they finish within their timeout (a
// MISC_CHECK command is killed) without touching it. The io_context must outlive them.
#pragma once

#include <asio/io_context.hpp>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "vservice/check_config.h"
#include "vservice/ip_address.h"
#include "vservice/service_key.h"

namespace vsc::director {

// `weight`: the misc_dynamic weight, or nullopt for the configured one. `up` false means
// remove the destination, or set its weight to 0 under inhibit_on_failure (the table decides).
using HealthCallback =
    std::function<void(const vservice::ServiceKey& service, const vservice::AddrPort& dest, bool up,
                       std::optional<uint32_t> weight, const std::string& reason)>;

// Every probe result, verdict changed or not, with the time it took (the engine clears a
// passive failure mark on a success, and keeps a response time for dwlc).
using ProbeObserver =
    std::function<void(const vservice::ServiceKey& service, const vservice::AddrPort& dest, bool ok,
                       Duration elapsed)>;

// One destination's check, for listings and metrics.
struct CheckSnapshot {
  vservice::ServiceKey service;
  vservice::AddrPort dest;
  vservice::CheckType type = vservice::CheckType::kTcp;
  bool up = false;
  bool in_flight = false;
  std::string last_result;  // "never run", "ok: connected", "failed: Connection refused"
  Duration last_duration{};
  std::optional<uint32_t> weight;
  uint64_t checks = 0;
  uint64_t failures = 0;
  uint64_t transitions = 0;
};

class HealthChecker {
 public:
  HealthChecker(asio::io_context& io, const Clock& clock, HealthCallback on_change);
  ~HealthChecker();
  HealthChecker(const HealthChecker&) = delete;
  HealthChecker& operator=(const HealthChecker&) = delete;

  // Starts checking `dest` of `service`, first probe now. Its verdict starts UP, or DOWN with
  // alpha; no callback for the start state. InvalidArgument if `check` is invalid,
  // AlreadyExists if the destination is checked already.
  Status Add(const vservice::ServiceKey& service, const vservice::AddrPort& dest,
             const vservice::CheckConfig& check);
  // New configuration, same verdict (HealthCheck::Reconfigure); NotFound if not checked.
  Status Update(const vservice::ServiceKey& service, const vservice::AddrPort& dest,
                const vservice::CheckConfig& check);
  // Stops checking; a probe in flight finishes but is not reported. NotFound if not checked.
  Status Remove(const vservice::ServiceKey& service, const vservice::AddrPort& dest);

  // The next probe of `dest` runs now (a passive check saw a connect fail); the verdict and
  // configuration stay. NotFound if not checked.
  Status ProbeSoon(const vservice::ServiceKey& service, const vservice::AddrPort& dest);
  // Called after every probe, on the io_context's thread.
  void SetProbeObserver(ProbeObserver observer) { observer_ = std::move(observer); }

  size_t size() const { return entries_.size(); }
  // In (service, dest) order.
  std::vector<CheckSnapshot> Snapshot() const;

  struct Entry;  // one checked destination, shared with its coroutine

 private:
  using Key = std::pair<vservice::ServiceKey, vservice::AddrPort>;

  asio::io_context& io_;
  const Clock& clock_;
  HealthCallback on_change_;
  ProbeObserver observer_;
  std::map<Key, std::shared_ptr<Entry>> entries_;
};

}  // namespace vsc::director
