// ServiceTableWatch: the thread that reads the service table's etcd key (service_table_sync.h)
// and hands each successful read to `publish` (the Director posts it to the control thread,
// where EtcdServiceEditor applies a newer revision).
//
// After each read it watches the key (etcd_watch.h, WatchFor::kAnyChange, from the read's
// mod_revision + 1, so no change between the read and the watch is missed) and reads again as
// soon as it changes, and at least every kServiceTableResync as a safety net. Each read is the
// whole table, so a watch that breaks (a compaction, etcd unreachable) loses nothing: the thread
// then polls every `interval` (service_table_poll_ms) until a read gives a revision to watch
// from again; while the key is absent it polls too.
//
// Thread: its own; `publish` runs on it. A failed read is logged when it starts failing and
// when it recovers. Lifecycle: Start → Stop (wakes the thread, also out of a watch through a
// WakeFd, joins; at most one etcd call's timeout per endpoint).
#pragma once

#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "common/clock.h"
#include "common/wake_fd.h"
#include "director/etcd_client.h"

namespace vsc::director {

inline constexpr Duration kServiceTableResync = std::chrono::seconds(30);

class ServiceTableWatch {
 public:
  using Publish = std::function<void(const std::optional<etcd::KeyValue>&)>;
  ServiceTableWatch(EtcdClient client, std::string key, Duration interval, Publish publish);
  ~ServiceTableWatch();

  void Start();
  void Stop();

 private:
  void Run();
  // Reads the key and publishes it; the revision to watch from, or nullopt (a failed read, an
  // absent key).
  std::optional<int64_t> ReadOnce();

  EtcdClient client_;
  std::string key_;
  Duration interval_;
  Publish publish_;
  bool failing_ = false;  // watch thread only

  std::mutex mu_;  // guards stopping_
  std::condition_variable cv_;
  bool stopping_ = false;
  std::thread thread_;
  WakeFd wake_;  // Stop signals it: ends a watch at once
};

}  // namespace vsc::director
