// SharedPersistence: one virtual service's persistence templates (ipvsadm -p), one table for
// every worker of the director, as LVS keeps one template table per host. Each worker
// accepts its own connections (SO_REUSEPORT spreads one client's connections over them), so a
// table per worker would send one client to as many servers as there are workers.
//
// It also tells the caller when a pick is worth passing to the peers (state sync, issue 11):
// a new template, one moved to another destination, or one still in use whose last note is
// half a timeout old (so a peer's copy never expires while the client stays). Templates the
// peers send come in through Adopt.
//
// Thread safe: a mutex around the table, held for one pick (a hash lookup and, for a new
// client, the worker's own scheduler).
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <unordered_map>

#include "common/clock.h"
#include "sched/backend.h"
#include "sched/persistence.h"
#include "sched/scheduler.h"
#include "vservice/virtual_service_table.h"

namespace vsc::director {

// The 32-bit key of an IPv6 network (already masked) in a persistence table and in the
// schedulers' flows; an IPv4 network is its own key.
uint32_t FoldNetwork(const vservice::IpAddress& network);

class SharedPersistence {
 public:
  // `options` as sched::PersistenceTable::Create accepts them (the service table validated
  // them); anything else aborts. `family`: the service's; an IPv6 table keeps each folded
  // key's network beside it, so its templates can be listed and sent to peers whole.
  SharedPersistence(const sched::PersistenceOptions& options, vservice::Family family);

  struct Picked {
    std::optional<size_t> index;  // into `backends`, as sched::PickPersistent
    bool note = false;            // pass this template on to the peers
  };
  // `network`: the client's address masked to the service's persistence prefix; `flow` the
  // scheduler's flow for it (FlowOf).
  Picked Pick(sched::Scheduler& scheduler, std::span<const sched::Backend> backends,
              const sched::Flow& flow, const vservice::IpAddress& network, TimePoint now);

  // A peer's template (sched::PersistenceTable::Adopt); false, adopting nothing, when the
  // network is not of the service's family.
  bool Adopt(const vservice::IpAddress& network, uint64_t backend_key, TimePoint expiry,
             TimePoint now);

  // Calls f(network, backend_key, expiry) for every template, under the lock.
  template <typename F>
  void ForEach(F&& f) const {
    std::lock_guard lock(mu_);
    table_.ForEach([&](uint32_t key, uint64_t backend_key, TimePoint expiry) {
      if (family_ == vservice::Family::kV4) {
        f(vservice::IpAddress::V4(key), backend_key, expiry);
      } else if (auto it = networks_.find(key); it != networks_.end()) {
        f(it->second, backend_key, expiry);
      }
    });
  }

  size_t size() const;
  const sched::PersistenceOptions& options() const { return table_.options(); }

 private:
  // Sweeps expired templates (and their notes) every 1024 picks, under the lock.
  void SweepLocked(TimePoint now);

  uint32_t KeyOf(const vservice::IpAddress& network) const;

  mutable std::mutex mu_;
  sched::PersistenceTable table_;
  vservice::Family family_;
  std::unordered_map<uint32_t, TimePoint> noted_;               // template key -> when last noted
  std::unordered_map<uint32_t, vservice::IpAddress> networks_;  // IPv6: key -> its network
  uint32_t picks_since_sweep_ = 0;
};

// The table for a service of `family` with persistence `p`: IPv4 networks masked to p's prefix,
// IPv6 networks masked to it, then folded to 32 bits (FoldNetwork) and kept whole.
std::shared_ptr<SharedPersistence> MakeSharedPersistence(vservice::Family family,
                                                         const vservice::Persistence& p,
                                                         bool expire_quiescent);

}  // namespace vsc::director
