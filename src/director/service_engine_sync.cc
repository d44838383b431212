// ServiceEngine's side of state sync (issue 11): the shared persistence tables its views carry
// and the records peer directors send.
#include <chrono>

#include "director/service_engine.h"
#include "director/session_hints.h"
#include "director/shared_persistence.h"
#include "director/sync_outbox.h"

namespace vsc::director {

void ServiceEngine::ShareSyncedState(const vservice::VirtualService& vs, Running& run,
                                     ServiceView& view) {
  const std::optional<vservice::Persistence>& p = vs.config.persistence;
  if (!p) {
    run.persistence.reset();
  } else if (!run.persistence || run.persistence_config != p ||
             run.persistence_family != vs.key.vip.family()) {
    run.persistence =
        MakeSharedPersistence(vs.key.vip.family(), *p, options_.sched.expire_quiescent_template);
  }
  run.persistence_config = p;
  run.persistence_family = vs.key.vip.family();
  view.persistence = run.persistence;
  view.sync = options_.sync;
  if (options_.sync && vs.key.proto == vservice::Proto::kUdp && !run.session_hints) {
    run.session_hints = std::make_shared<SessionHints>();
  }
  view.session_hints = run.session_hints;
}

bool ServiceEngine::AdoptSynced(const SyncRecord& r) {
  auto it = running_.find(r.service);
  if (it == running_.end() || !it->second.view) return false;
  Running& run = it->second;
  const ServiceView& view = *run.view;
  const DestView* dest = nullptr;
  for (const DestView& d : view.dests) {
    if (d.dest == r.dest) dest = &d;
  }
  if (dest == nullptr) return false;
  const TimePoint now = clock_.Now();
  const TimePoint expiry = now + r.expires_in;
  if (r.kind == SyncKind::kTemplate) {
    if (!run.persistence) return false;
    return run.persistence->Adopt(r.client.addr, dest->backend.key, expiry, now);
  }
  if (!run.session_hints) return false;
  run.session_hints->Adopt(r.client, r.dest, expiry, now);
  return true;
}

}  // namespace vsc::director
