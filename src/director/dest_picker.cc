#include "director/dest_picker.h"

#include <chrono>
#include <cstdlib>

#include "director/session_hints.h"
#include "director/shared_persistence.h"
#include "director/sync_outbox.h"

namespace vsc::director {

sched::Flow FlowOf(const vservice::AddrPort& client, int prefix_len) {
  if (client.addr.is_v4()) return {client.addr.v4(), client.port};
  return {FoldNetwork(client.addr.Masked(prefix_len)), client.port};
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
  if (view_->session_hints) {
    if (auto i = Hinted(view_->session_hints->Take(client, now))) return i;
  }
  const int prefix = view_->config.persistence ? view_->config.persistence->prefix_len : 128;
  const sched::Flow flow = FlowOf(client, prefix);
  if (!view_->persistence) return scheduler_->Pick(backends_, flow);
  const vservice::IpAddress network = client.addr.Masked(prefix);
  const SharedPersistence::Picked picked =
      view_->persistence->Pick(*scheduler_, backends_, flow, network, now);
  if (picked.note && view_->sync) {
    SyncRecord r;
    r.kind = SyncKind::kTemplate;
    r.service = view_->key;
    r.client = {network, 0};
    r.dest = view_->dests[*picked.index].dest;
    r.expires_in = std::chrono::duration_cast<std::chrono::milliseconds>(
        view_->persistence->options().timeout);
    view_->sync->Note(r);
  }
  return picked.index;
}

std::optional<size_t> DestPicker::Hinted(const std::optional<vservice::AddrPort>& dest) const {
  if (!dest) return std::nullopt;
  for (size_t i = 0; i < backends_.size(); ++i) {
    if (view_->dests[i].dest == *dest) {
      return backends_[i].available ? std::optional<size_t>(i) : std::nullopt;
    }
  }
  return std::nullopt;
}

std::vector<PersistenceTemplate> ListTemplates(const ServiceView& view, TimePoint now) {
  std::vector<PersistenceTemplate> out;
  if (!view.persistence) return out;
  view.persistence->ForEach(
      [&](const vservice::IpAddress& network, uint64_t backend_key, TimePoint expiry) {
        if (expiry <= now) return;
        for (const DestView& d : view.dests) {
          if (d.backend.key != backend_key) continue;
          out.push_back({{network, 0}, d.dest, expiry - now});
          return;
        }
      });
  return out;
}

}  // namespace vsc::director
