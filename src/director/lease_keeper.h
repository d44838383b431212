// LeaseKeeper: the thread that makes the sequencer lease's etcd calls (sequencer_lease.h) with an
// EtcdClient, and hands every new LeaseView to `publish` (the Director posts it to the control
// thread, where the Replicator sequences only under a held, unexpired view).
//
// Thread: its own; `publish` runs on it. Lifecycle: Start → Stop (wakes the thread, revokes a
// held lease so a standby can take over at once instead of after the TTL, joins). Stop takes at
// most about one etcd call's timeout per endpoint. While a standby waits, it watches the holder's
// key (etcd_watch.h) so that it claims the key as soon as etcd deletes it.
#pragma once

#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "common/clock.h"
#include "common/wake_fd.h"
#include "director/etcd_client.h"
#include "director/sequencer_lease.h"

namespace vsc::director {

struct LeaseKeeperOptions {
  std::string key;       // /vscluster/<cluster>/sequencer
  std::string identity;  // the key's value: who holds it, as other directors report it
  Duration ttl = std::chrono::seconds(3);
};

class LeaseKeeper {
 public:
  using Publish = std::function<void(const LeaseView&)>;
  LeaseKeeper(EtcdClient client, LeaseKeeperOptions options, const Clock& clock, Publish publish);
  ~LeaseKeeper();

  void Start();
  void Stop();

 private:
  void Run();
  void Step(const LeaseAction& action);
  void PublishIfChanged(TimePoint now);
  // Waits until `until` (or Stop); a standby watches the holder's key meanwhile. Called with
  // `lock` held; returns with it held.
  void WaitUntil(std::unique_lock<std::mutex>& lock, TimePoint until);

  EtcdClient client_;
  LeaseKeeperOptions options_;
  const Clock& clock_;
  Publish publish_;
  SequencerLease lease_;  // keeper thread only
  LeaseView published_;   // keeper thread only
  bool published_once_ = false;

  std::mutex mu_;  // guards stopping_
  std::condition_variable cv_;
  bool stopping_ = false;
  std::thread thread_;
  WakeFd wake_;  // Stop signals it: ends a watch at once
};

}  // namespace vsc::director
