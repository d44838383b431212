// ServiceTableWatch: the thread that reads the service table's etcd key (service_table_sync.h)
// every `interval` and hands each successful read to `publish` (the Director posts it to the
// control thread, where EtcdServiceEditor applies a newer revision).
//
// Polling /v3/kv/range rather than etcd's /v3/watch stream (etcd_watch.h watches the sequencer
// key, where a standby must act on the delete at once): a poll moves to another endpoint as every
// EtcdClient call does, and it can miss no event (each read is the whole table; a watch would need re-syncing after a compaction or a
// broken stream). One small read per director every 200 ms is no load for etcd, and it bounds
// how long a standby runs an old table.
//
// Thread: its own; `publish` runs on it. A failed read is logged when it starts failing and
// when it recovers. Lifecycle: Start → Stop (wakes the thread, joins; at most one etcd call's
// timeout per endpoint).
#pragma once

#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "common/clock.h"
#include "director/etcd_client.h"

namespace vsc::director {

class ServiceTableWatch {
 public:
  using Publish = std::function<void(const std::optional<etcd::KeyValue>&)>;
  ServiceTableWatch(EtcdClient client, std::string key, Duration interval, Publish publish);
  ~ServiceTableWatch();

  void Start();
  void Stop();

 private:
  void Run();
  void ReadOnce();

  EtcdClient client_;
  std::string key_;
  Duration interval_;
  Publish publish_;
  bool failing_ = false;  // watch thread only

  std::mutex mu_;  // guards stopping_
  std::condition_variable cv_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace vsc::director
