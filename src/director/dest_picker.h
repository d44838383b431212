// DestPicker: what one worker needs to schedule new flows of one virtual service from its
// ServiceView: a scheduler instance (its own cursor over the view's shared table, which the
// control thread built; a new view with the same table adopts nothing), and a backend vector whose
// connection counts are read, at each pick, from the cluster-wide DestStats of the view (so
// lc/wlc/sed/nq compare the same numbers on every worker).
//
// Pick() can exclude destinations already tried for this flow (redispatch after a failed
// connect) and honours the upper connection threshold (ipvsadm -x: no new work at that many
// active connections). Persistence goes through the view's SharedPersistence (one table for
// every worker), and a new client of a UDP service may follow a peer director's session
// (SessionHints); picks worth it are noted for the peers (the view's SyncOutbox). Owned by one
// worker thread, never shared; only the shared tables lock.
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "common/clock.h"
#include "director/service_view.h"
#include "sched/backend.h"
#include "sched/scheduler.h"

namespace vsc::director {

// The scheduler's flow for a client address: IPv4 as is, IPv6 folded to 32 bits after the
// persistence prefix is applied (FoldNetwork: the whole prefix maps to one template).
sched::Flow FlowOf(const vservice::AddrPort& client, int prefix_len);

// The persistence templates of a view's service still live at `now` (ipvsadm -L -c's NONE
// entries): the client's network (its address masked, port 0, IPv4 or IPv6) and the
// destination it sticks to.
struct PersistenceTemplate {
  vservice::AddrPort network;
  vservice::AddrPort dest;
  Duration expires_in;
};
std::vector<PersistenceTemplate> ListTemplates(const ServiceView& view, TimePoint now);

class DestPicker {
 public:
  explicit DestPicker(sched::SchedulerOptions options) : options_(options) {}

  // Adopts a new view of the same service: its scheduler table when it differs from the one in
  // use (never builds one); a scheduler or persistence change makes new ones.
  void OnView(ServiceViewPtr view);

  // The scheduler table in use (the view's), or nullptr.
  const sched::SchedTable* sched_table() const {
    return scheduler_ ? scheduler_->table() : nullptr;
  }

  // Index into view()->dests of the destination for a new flow, or nullopt when none can take
  // it. `tried` flags (same size as dests, or empty) are destinations this flow already failed.
  std::optional<size_t> Pick(const vservice::AddrPort& client, TimePoint now,
                             std::span<const bool> tried = {});

  const ServiceViewPtr& view() const { return view_; }

 private:
  // The index of a peer's hinted destination when it is in the view and available.
  std::optional<size_t> Hinted(const std::optional<vservice::AddrPort>& dest) const;

  sched::SchedulerOptions options_;
  ServiceViewPtr view_;
  std::vector<sched::Backend> backends_;
  std::unique_ptr<sched::Scheduler> scheduler_;
};

}  // namespace vsc::director
