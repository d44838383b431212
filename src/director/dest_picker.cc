#include "director/dest_picker.h"

#include <chrono>
#include <cstdlib>

#include "sched/hash.h"

namespace vsc::director {

sched::Flow FlowOf(const vservice::AddrPort& client, int prefix_len) {
  if (client.addr.is_v4()) return {client.addr.v4(), client.port};
  const vservice::IpAddress masked = client.addr.Masked(prefix_len);
  const auto& b = masked.bytes();
  uint64_t h = 0;
  for (size_t i = 0; i < b.size(); ++i) h = sched::SaltedHash(h ^ b[i], i);
  return {static_cast<uint32_t>(h ^ (h >> 32)), client.port};
}

void DestPicker::OnView(ServiceViewPtr view) {
  const vservice::ServiceConfig& c = view->config;
  bool adopt = !view_ || view_->sched_table != view->sched_table ||
               view_->dests.size() != view->dests.size();
  if (!scheduler_ || scheduler_->name() != c.scheduler) {
    auto made = sched::MakeScheduler(c.scheduler, options_);
    if (!made.ok()) std::abort();  // the table validated the name
    scheduler_ = std::move(made).value();
    adopt = true;
  }
  backends_.clear();
  for (const DestView& d : view->dests) backends_.push_back(d.backend);
  if (adopt) scheduler_->Adopt(view->sched_table, backends_);
  const bool same_persistence = view_ && view_->config.persistence == c.persistence &&
                                view_->key.vip.family() == view->key.vip.family();
  if (!c.persistence) {
    persistence_.reset();
  } else if (!persistence_ || !same_persistence) {
    sched::PersistenceOptions po;
    po.timeout = std::chrono::seconds(c.persistence->timeout_s);
    po.expire_quiescent = options_.expire_quiescent_template;
    const int prefix = view->key.vip.is_v4() ? c.persistence->prefix_len : 32;
    po.netmask = prefix == 0 ? 0 : ~uint32_t{0} << (32 - prefix);
    auto table = sched::PersistenceTable::Create(po);
    if (!table.ok()) std::abort();  // the table validated timeout and netmask
    persistence_ = std::make_unique<sched::PersistenceTable>(std::move(table).value());
  }
  view_ = std::move(view);
}

std::optional<size_t> DestPicker::Pick(const vservice::AddrPort& client, TimePoint now,
                                       std::span<const bool> tried) {
  if (!view_ || backends_.empty()) return std::nullopt;
  for (size_t i = 0; i < backends_.size(); ++i) {
    const DestView& d = view_->dests[i];
    sched::Backend& b = backends_[i];
    const uint64_t active = Read(d.stats->active);
    b.active = static_cast<uint32_t>(active);
    b.inactive = static_cast<uint32_t>(Read(d.stats->inactive));
    const bool over = d.u_threshold != 0 && active >= d.u_threshold;
    const bool failed = i < tried.size() && tried[i];
    b.available = d.backend.available && !over && !failed;
  }
  const int prefix = view_->config.persistence ? view_->config.persistence->prefix_len : 128;
  const sched::Flow flow = FlowOf(client, prefix);
  if (!persistence_) return scheduler_->Pick(backends_, flow);
  if (++picks_since_expire_ >= 1024) {  // sweep expired templates a little at a time
    picks_since_expire_ = 0;
    persistence_->Expire(now);
  }
  return sched::PickPersistent(*persistence_, *scheduler_, backends_, flow, now);
}

std::vector<DestPicker::Template> DestPicker::Templates(TimePoint now) const {
  std::vector<Template> out;
  if (!persistence_ || !view_ || !view_->key.vip.is_v4()) return out;
  persistence_->ForEach([&](uint32_t network, uint64_t backend_key, TimePoint expiry) {
    if (expiry <= now) return;
    for (const DestView& d : view_->dests) {
      if (d.backend.key != backend_key) continue;
      out.push_back({{vservice::IpAddress::V4(network), 0}, d.dest, expiry - now});
      return;
    }
  });
  return out;
}

}  // namespace vsc::director
