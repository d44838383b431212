#include "director/service_table_watch.h"

#include <spdlog/spdlog.h>

#include "director/etcd_watch.h"

namespace vsc::director {

ServiceTableWatch::ServiceTableWatch(EtcdClient client, std::string key, Duration interval,
                                     Publish publish)
    : client_(std::move(client)),
      key_(std::move(key)),
      interval_(interval),
      publish_(std::move(publish)) {}

ServiceTableWatch::~ServiceTableWatch() { Stop(); }

void ServiceTableWatch::Start() {
  thread_ = std::thread([this] { Run(); });
}

void ServiceTableWatch::Stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  wake_.Signal();
  if (thread_.joinable()) thread_.join();
}

std::optional<int64_t> ServiceTableWatch::ReadOnce() {
  auto kv = client_.Get(key_);
  if (!kv.ok()) {
    if (!failing_) {
      spdlog::warn("service table: reading {} from etcd failed ({}); the running table stays", key_,
                   kv.status().message());
    }
    failing_ = true;
    return std::nullopt;
  }
  if (failing_) spdlog::info("service table: etcd answers again for {}", key_);
  failing_ = false;
  publish_(*kv);
  if (!*kv) return std::nullopt;
  return (*kv)->mod_revision + 1;
}

void ServiceTableWatch::Run() {
  std::unique_lock lock(mu_);
  while (!stopping_) {
    lock.unlock();
    if (const std::optional<int64_t> from = ReadOnce()) {
      const Clock& clock = DefaultClock();
      auto end = WatchKey(client_, key_, *from, WatchFor::kAnyChange,
                          clock.Now() + kServiceTableResync, clock, wake_.fd());
      lock.lock();
      if (end.ok()) continue;  // changed, resync time, or Stop: read again (or end)
      spdlog::debug("service table: watch of {}: {}; polling", key_, end.status().message());
    } else {
      lock.lock();
    }
    cv_.wait_for(lock, interval_, [this] { return stopping_; });
  }
}

}  // namespace vsc::director
