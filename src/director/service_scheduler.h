// ServiceScheduler: what one worker needs to schedule one virtual service — its copy of the
// backends of that service's candidates in the current view (ClusterView::services[service]), a
// scheduler instance built for them, and the persistence table. Owned by one worker thread, never
// shared, never locked (DESIGN §4).
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "common/clock.h"
#include "director/cluster_view.h"
#include "sched/backend.h"
#include "sched/persistence.h"
#include "sched/scheduler.h"

namespace vsc::director {

class ServiceScheduler {
 public:
  // `service`: kUdpService or kTcpService, the candidate list of the view it schedules.
  ServiceScheduler(int service, sched::SchedulerOptions options)
      : service_(service), options_(options) {}

  // Adopts a new view: copies backends (keeping this worker's connection counts for servers
  // that stay), rebuilds the scheduler tables, switches scheduler if the view names another.
  void OnView(const ViewPtr& view);

  // Index into servers(), or nullopt when no server can take new work.
  std::optional<size_t> Pick(const sched::Flow& flow, TimePoint now);

  // Connection accounting for lc/wlc/sed/nq on this worker.
  void Acquire(size_t index) { backends_[index].active++; }
  void ReleaseSlot(uint32_t slot);
  // For datagram services, where the director never sees the end of a request: halves every
  // count, so `active` tracks the recent request rate (called once per heartbeat period).
  void Decay();

  const ViewPtr& view() const { return view_; }
  // This service's candidates in the current view (empty before the first view).
  const std::vector<ViewServer>& servers() const;

 private:
  int service_;
  sched::SchedulerOptions options_;
  ViewPtr view_;
  std::vector<sched::Backend> backends_;
  std::unique_ptr<sched::Scheduler> scheduler_;
  std::unique_ptr<sched::PersistenceTable> persistence_;
  uint32_t picks_since_expire_ = 0;
};

}  // namespace vsc::director
