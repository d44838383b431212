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

class SharedPersistence {
 public:
  // `options` as sched::PersistenceTable::Create accepts them (the service table validated
  // them); anything else aborts.
  explicit SharedPersistence(const sched::PersistenceOptions& options);

  struct Picked {
    std::optional<size_t> index;  // into `backends`, as sched::PickPersistent
    bool note = false;            // pass this template on to the peers
    uint32_t key = 0;             // the template's key (the client's network)
  };
  Picked Pick(sched::Scheduler& scheduler, std::span<const sched::Backend> backends,
              const sched::Flow& flow, TimePoint now);

  // A peer's template (sched::PersistenceTable::Adopt).
  void Adopt(uint32_t key, uint64_t backend_key, TimePoint expiry, TimePoint now);

  // Calls f(key, backend_key, expiry) for every template, under the lock.
  template <typename F>
  void ForEach(F&& f) const {
    std::lock_guard lock(mu_);
    table_.ForEach(f);
  }

  size_t size() const;
  const sched::PersistenceOptions& options() const { return table_.options(); }

 private:
  // Sweeps expired templates (and their notes) every 1024 picks, under the lock.
  void SweepLocked(TimePoint now);

  mutable std::mutex mu_;
  sched::PersistenceTable table_;
  std::unordered_map<uint32_t, TimePoint> noted_;  // template key -> when last noted
  uint32_t picks_since_sweep_ = 0;
};

// The table for a service of `family` with persistence `p`: IPv4 networks masked to p's prefix,
// IPv6 networks folded to 32 bits after it (dest_picker.h's FlowOf) and kept whole.
std::shared_ptr<SharedPersistence> MakeSharedPersistence(vservice::Family family,
                                                         const vservice::Persistence& p,
                                                         bool expire_quiescent);

}  // namespace vsc::director
