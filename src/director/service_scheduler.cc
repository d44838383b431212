#include "director/service_scheduler.h"

#include <chrono>
#include <unordered_map>

namespace vsc::director {

void ServiceScheduler::OnView(const ViewPtr& view) {
  // Keep this worker's connection counts across views: they describe flows still open here.
  std::unordered_map<uint32_t, std::pair<uint32_t, uint32_t>> counts;
  if (view_) {
    const std::vector<ViewServer>& old = servers();
    for (size_t i = 0; i < old.size(); ++i) {
      counts[old[i].slot] = {backends_[i].active, backends_[i].inactive};
    }
  }
  const std::vector<ViewServer>& candidates = view->services[service_];
  backends_.clear();
  backends_.reserve(candidates.size());
  for (const auto& s : candidates) {
    sched::Backend b = s.backend;
    if (auto it = counts.find(s.slot); it != counts.end()) {
      b.active = it->second.first;
      b.inactive = it->second.second;
    } else {
      b.active = 0;
      b.inactive = 0;
    }
    backends_.push_back(b);
  }
  if (!scheduler_ || scheduler_->name() != view->scheduler) {
    auto made = sched::MakeScheduler(view->scheduler, options_);
    // The control plane validates names before publishing, so a failure here is a bug.
    if (!made.ok()) std::abort();
    scheduler_ = std::move(made).value();
  }
  scheduler_->Rebuild(backends_);
  if (view->persistence_timeout_s == 0) {
    persistence_.reset();
  } else if (!persistence_ || !view_ ||
             view_->persistence_timeout_s != view->persistence_timeout_s ||
             view_->persistence_netmask != view->persistence_netmask) {
    sched::PersistenceOptions po;
    po.timeout = std::chrono::seconds(view->persistence_timeout_s);
    po.netmask = view->persistence_netmask;
    auto table = sched::PersistenceTable::Create(po);
    if (!table.ok()) std::abort();  // the control plane validated timeout and netmask
    persistence_ = std::make_unique<sched::PersistenceTable>(std::move(table).value());
  }
  view_ = view;
}

std::optional<size_t> ServiceScheduler::Pick(const sched::Flow& flow, TimePoint now) {
  if (!scheduler_) return std::nullopt;
  if (persistence_) {
    // Expired templates are also swept here, a little at a time, so the table stays small
    // without a timer.
    if (++picks_since_expire_ >= 1024) {
      picks_since_expire_ = 0;
      persistence_->Expire(now);
    }
    return sched::PickPersistent(*persistence_, *scheduler_, backends_, flow, now);
  }
  return scheduler_->Pick(backends_, flow);
}

const std::vector<ViewServer>& ServiceScheduler::servers() const {
  static const std::vector<ViewServer> kNone;
  return view_ ? view_->services[service_] : kNone;
}

void ServiceScheduler::ReleaseSlot(uint32_t slot) {
  const std::vector<ViewServer>& current = servers();
  for (size_t i = 0; i < current.size(); ++i) {
    if (current[i].slot == slot) {
      if (backends_[i].active > 0) backends_[i].active--;
      return;
    }
  }
}

void ServiceScheduler::Decay() {
  for (auto& b : backends_) b.active /= 2;
}

}  // namespace vsc::director
