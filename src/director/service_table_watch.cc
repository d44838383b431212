#include "director/service_table_watch.h"

#include <spdlog/spdlog.h>

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
  if (thread_.joinable()) thread_.join();
}

void ServiceTableWatch::ReadOnce() {
  auto kv = client_.Get(key_);
  if (!kv.ok()) {
    if (!failing_) {
      spdlog::warn("service table: reading {} from etcd failed ({}); the running table stays", key_,
                   kv.status().message());
    }
    failing_ = true;
    return;
  }
  if (failing_) spdlog::info("service table: etcd answers again for {}", key_);
  failing_ = false;
  publish_(*kv);
}

void ServiceTableWatch::Run() {
  std::unique_lock lock(mu_);
  while (!stopping_) {
    lock.unlock();
    ReadOnce();
    lock.lock();
    cv_.wait_for(lock, interval_, [this] { return stopping_; });
  }
}

}  // namespace vsc::director
