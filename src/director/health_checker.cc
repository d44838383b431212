#include "director/health_checker.h"

#include <spdlog/spdlog.h>

#include <asio/co_spawn.hpp>
#include <asio/detached.hpp>
#include <asio/ip/tcp.hpp>
#include <asio/steady_timer.hpp>
#include <asio/use_awaitable.hpp>

#include "director/probe.h"
#include "membership/health.h"
#include "net/as_tuple.h"

namespace vsc::director {

using net::kTuple;

struct HealthChecker::Entry {
  Entry(asio::io_context& io, const Clock& c, const HealthCallback& cb, const ProbeObserver& ob,
        const vservice::ServiceKey& s, const vservice::AddrPort& d,
        const vservice::CheckConfig& check)
      : service(s),
        dest(d),
        target(vservice::ToString(d)),
        core(check, target, c.Now()),
        timer(io),
        clock(&c),
        on_change(&cb),
        observer(&ob) {}

  const vservice::ServiceKey service;
  const vservice::AddrPort dest;
  const std::string target;
  membership::HealthCheck core;
  asio::steady_timer timer;  // the wait for the next probe
  // Set by Remove or ~HealthChecker: from then on the coroutine touches nothing but the entry
  // (clock and on_change belong to the checker).
  bool removed = false;
  const Clock* clock;
  const HealthCallback* on_change;
  const ProbeObserver* observer;
  std::string last_result = "never run";
  Duration last_duration{};
};

namespace {

using Entry = HealthChecker::Entry;

asio::ip::address ToAsio(const vservice::IpAddress& ip) {
  const auto& b = ip.bytes();
  if (ip.is_v4())
    return asio::ip::address_v4(asio::ip::address_v4::bytes_type{b[0], b[1], b[2], b[3]});
  asio::ip::address_v6::bytes_type v6;
  std::copy(b.begin(), b.end(), v6.begin());
  return asio::ip::address_v6(v6);
}

void Report(Entry& e, const membership::HealthTransition& t) {
  if (!t.up) {
    spdlog::warn("health: {} DOWN for {}: {}", e.target, vservice::ToString(e.service), t.reason);
  } else {
    spdlog::info("health: {} {} for {}: {}", e.target, t.verdict_changed ? "UP" : "weight change",
                 vservice::ToString(e.service), t.reason);
  }
  (*e.on_change)(e.service, e.dest, t.up, t.weight, t.reason);
}

// One probe: start it in the core, run it, feed the result back.
asio::awaitable<void> ProbeOnce(std::shared_ptr<Entry> e) {
  const TimePoint start = e->clock->Now();
  const TimePoint deadline = e->core.Start(start);
  const asio::ip::tcp::endpoint endpoint(ToAsio(e->dest.addr), e->dest.port);
  membership::ProbeResult result =
      co_await RunProbe(e->core.config(), endpoint, e->target, deadline - start);
  if (e->removed) co_return;
  const TimePoint end = e->clock->Now();
  e->last_duration = end - start;
  e->last_result = (result.ok ? "ok: " : "failed: ") + result.detail;
  spdlog::debug("health: {} {}", e->target, e->last_result);
  if (auto t = e->core.OnResult(result, end)) Report(*e, *t);
  if (!e->removed && *e->observer) (*e->observer)(e->service, e->dest, result.ok, end - start);
}

// The destination's life: wait until a probe is due, run it, repeat until removed.
asio::awaitable<void> CheckLoop(std::shared_ptr<Entry> e) {
  while (!e->removed) {
    const Duration wait = e->core.next_due() - e->clock->Now();
    if (wait > Duration::zero()) {
      e->timer.expires_after(wait);
      (void)co_await e->timer.async_wait(kTuple);  // cancelled by Update and Remove
      continue;
    }
    co_await ProbeOnce(e);
  }
}

}  // namespace

HealthChecker::HealthChecker(asio::io_context& io, const Clock& clock, HealthCallback on_change)
    : io_(io), clock_(clock), on_change_(std::move(on_change)) {}

HealthChecker::~HealthChecker() {
  for (auto& [key, e] : entries_) {
    e->removed = true;
    e->timer.cancel();
  }
}

Status HealthChecker::Add(const vservice::ServiceKey& service, const vservice::AddrPort& dest,
                          const vservice::CheckConfig& check) {
  VSC_RETURN_IF_ERROR(vservice::Validate(check));
  Key key{service, dest};
  if (entries_.contains(key)) {
    return AlreadyExists("health check for " + vservice::ToString(dest) + " of " +
                         vservice::ToString(service) + " exists already; use Update");
  }
  auto e = std::make_shared<Entry>(io_, clock_, on_change_, observer_, service, dest, check);
  entries_.emplace(std::move(key), e);
  asio::co_spawn(io_, CheckLoop(std::move(e)), asio::detached);
  return Status::Ok();
}

Status HealthChecker::Update(const vservice::ServiceKey& service, const vservice::AddrPort& dest,
                             const vservice::CheckConfig& check) {
  VSC_RETURN_IF_ERROR(vservice::Validate(check));
  auto it = entries_.find(Key{service, dest});
  if (it == entries_.end()) {
    return NotFound("no health check for " + vservice::ToString(dest) + " of " +
                    vservice::ToString(service) + "; use Add");
  }
  if (it->second->core.config() == check) return Status::Ok();
  it->second->core.Reconfigure(check, clock_.Now());
  it->second->timer.cancel();  // the loop recomputes when the next probe is due
  return Status::Ok();
}

Status HealthChecker::ProbeSoon(const vservice::ServiceKey& service,
                                const vservice::AddrPort& dest) {
  auto it = entries_.find(Key{service, dest});
  if (it == entries_.end()) {
    return NotFound("no health check for " + vservice::ToString(dest) + " of " +
                    vservice::ToString(service));
  }
  Entry& e = *it->second;
  e.core.ExpediteNext(clock_.Now());
  e.timer.cancel();  // the loop recomputes when the next probe is due
  return Status::Ok();
}

Status HealthChecker::Remove(const vservice::ServiceKey& service, const vservice::AddrPort& dest) {
  auto it = entries_.find(Key{service, dest});
  if (it == entries_.end()) {
    return NotFound("no health check for " + vservice::ToString(dest) + " of " +
                    vservice::ToString(service));
  }
  it->second->removed = true;
  it->second->timer.cancel();
  entries_.erase(it);
  return Status::Ok();
}

std::vector<CheckSnapshot> HealthChecker::Snapshot() const {
  std::vector<CheckSnapshot> out;
  out.reserve(entries_.size());
  for (const auto& [key, e] : entries_) {
    const membership::HealthCheck& c = e->core;
    out.push_back(CheckSnapshot{e->service, e->dest, c.config().type, c.up(), c.in_flight(),
                                e->last_result, e->last_duration, c.weight(), c.checks(),
                                c.failures(), c.transitions()});
  }
  return out;
}

}  // namespace vsc::director
