#include "director/lease_keeper.h"

#include <spdlog/spdlog.h>

#include "director/etcd_watch.h"

namespace vsc::director {

LeaseKeeper::LeaseKeeper(EtcdClient client, LeaseKeeperOptions options, const Clock& clock,
                         Publish publish)
    : client_(std::move(client)),
      options_(std::move(options)),
      clock_(clock),
      publish_(std::move(publish)),
      lease_(options_.ttl, options_.identity) {}

LeaseKeeper::~LeaseKeeper() { Stop(); }

void LeaseKeeper::Start() {
  thread_ = std::thread([this] { Run(); });
}

void LeaseKeeper::Stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  wake_.Signal();
  if (thread_.joinable()) thread_.join();
}

void LeaseKeeper::PublishIfChanged(TimePoint now) {
  const LeaseView v = lease_.View(now);
  if (published_once_ && v == published_) return;
  if (v.held != published_.held || v.refusal != published_.refusal || !published_once_) {
    if (v.held) {
      spdlog::info("sequencer lease held: {} under epoch {}", options_.key, v.epoch);
    } else {
      spdlog::warn("sequencer lease not held: {}", v.refusal);
    }
  }
  published_ = v;
  published_once_ = true;
  publish_(v);
}

void LeaseKeeper::Step(const LeaseAction& action) {
  using K = LeaseAction::Kind;
  const TimePoint sent = clock_.Now();
  switch (action.kind) {
    case K::kRevoke:
      if (Status s = client_.Revoke(action.lease_id); s.ok()) {
        lease_.OnRevoked();
      } else {
        lease_.OnError(action.kind, s, clock_.Now());
      }
      break;
    case K::kGrant:
      if (auto g = client_.Grant(lease_.ttl_seconds()); g.ok()) {
        lease_.OnGranted(*g, sent);
      } else {
        lease_.OnError(action.kind, g.status(), clock_.Now());
      }
      break;
    case K::kAcquire:
      if (auto t = client_.CreateWithLease(options_.key, options_.identity, action.lease_id);
          t.ok()) {
        lease_.OnAcquire(*t, sent);
      } else {
        lease_.OnError(action.kind, t.status(), clock_.Now());
      }
      break;
    case K::kKeepAlive:
      if (auto k = client_.KeepAlive(action.lease_id); k.ok()) {
        lease_.OnKeepAlive(*k, sent);
      } else {
        lease_.OnError(action.kind, k.status(), clock_.Now());
      }
      break;
    case K::kWait:
      break;
  }
}

void LeaseKeeper::WaitUntil(std::unique_lock<std::mutex>& lock, TimePoint until) {
  if (const std::optional<int64_t> from = lease_.WatchFrom()) {
    lock.unlock();
    auto end = WatchKey(client_, options_.key, *from, WatchFor::kDelete, until, clock_, wake_.fd());
    lock.lock();
    if (end.ok()) {
      if (*end == WatchEnd::kEvent) {
        spdlog::info("sequencer lease: the holder's key {} is gone; claiming it", options_.key);
        lease_.OnHolderGone(clock_.Now());
      }
      return;
    }
    // etcd did not keep the watch: wait for the periodic claim instead.
    spdlog::debug("sequencer lease: watch of {}: {}", options_.key, end.status().message());
  }
  cv_.wait_for(lock, until - clock_.Now(), [this] { return stopping_; });
}

void LeaseKeeper::Run() {
  std::unique_lock lock(mu_);
  while (!stopping_) {
    lock.unlock();
    TimePoint now = clock_.Now();
    lease_.Tick(now);
    PublishIfChanged(now);
    const LeaseAction action = lease_.Next(now);
    if (action.kind != LeaseAction::Kind::kWait) {
      Step(action);
      lease_.Tick(clock_.Now());
      PublishIfChanged(clock_.Now());
      lock.lock();
      continue;
    }
    lock.lock();
    WaitUntil(lock, action.at);
  }
  lock.unlock();
  if (lease_.lease_id() != 0) {
    // Stepping down: a standby may claim the key now rather than after the TTL.
    if (Status s = client_.Revoke(lease_.lease_id()); !s.ok()) {
      spdlog::warn("sequencer lease: revoke at stop failed ({}); it expires within the TTL",
                   s.message());
    }
  }
}

}  // namespace vsc::director
