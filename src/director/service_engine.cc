#include "director/service_engine.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <asio/post.hpp>
#include <iterator>

#include "common/ewma.h"
#include "director/lookup_view.h"
#include "director/sched_table_share.h"
#include "director/udp_dr_service.h"
#include "director/udp_nat_service.h"
#include "sched/dwlc.h"

namespace vsc::director {
namespace {

using vservice::AddrPort;
using vservice::Change;
using vservice::ChangeKind;
using vservice::ServiceKey;
using vservice::VirtualService;

// A probe runs every delay_loop, so its response time follows quickly: half old, half new.
constexpr double kCheckResponseAlpha = 0.5;

// ipvsadm's command names (cmdnames[] in ipvsadm.c), for the log.
const char* KindName(ChangeKind kind) {
  switch (kind) {
    case ChangeKind::kAddService:
      return "add-service";
    case ChangeKind::kEditService:
      return "edit-service";
    case ChangeKind::kDelService:
      return "delete-service";
    case ChangeKind::kAddDest:
      return "add-server";
    case ChangeKind::kEditDest:
      return "edit-server";
    case ChangeKind::kDelDest:
      return "delete-server";
    case ChangeKind::kClear:
      return "flush";
  }
  return "?";
}

Change MakeChange(ChangeKind kind, const ServiceKey& key, std::optional<AddrPort> dest = {}) {
  Change c;
  c.kind = kind;
  c.services = {key};
  c.dest = dest;
  return c;
}

// The destination changes between two versions of one service, in destination order.
void DiffDests(const VirtualService& a, const VirtualService& b, std::vector<Change>& out) {
  for (const auto& [addr, cfg] : a.dests) {
    if (!b.dests.contains(addr)) out.push_back(MakeChange(ChangeKind::kDelDest, a.key, addr));
  }
  for (const auto& [addr, cfg] : b.dests) {
    auto it = a.dests.find(addr);
    if (it == a.dests.end()) {
      out.push_back(MakeChange(ChangeKind::kAddDest, b.key, addr));
    } else if (!(it->second == cfg)) {
      out.push_back(MakeChange(ChangeKind::kEditDest, b.key, addr));
    }
  }
}

}  // namespace

ServiceEngine::ServiceEngine(asio::io_context& control, net::WorkerPool& pool, const Clock& clock,
                             const ControlPlane& plane, EngineOptions options)
    : control_(control),
      pool_(pool),
      clock_(clock),
      plane_(plane),
      options_(std::move(options)),
      timeouts_(std::make_shared<net::FlowTimeouts>(options_.timeouts)),
      checker_(
          control, clock,
          [this](const ServiceKey& s, const AddrPort& d, bool up, std::optional<uint32_t> weight,
                 const std::string&) { OnHealth(s, d, up, weight); }),
      decay_timer_(control) {
  options_.nat.proxy.timeouts = timeouts_;
  checker_.SetProbeObserver([this](const ServiceKey& s, const AddrPort& d, bool ok,
                                   Duration elapsed) { OnProbe(s, d, ok, elapsed); });
  ArmDecay();
}

// In dr mode the director never sees a request end, so a destination's `active` figure counts
// recent requests: halved every period, it follows the request rate, which lc/wlc compare.
void ServiceEngine::ArmDecay() {
  decay_timer_.expires_after(options_.dr_decay_period);
  decay_timer_.async_wait([this](const asio::error_code& ec) {
    if (ec || stopped_) return;
    for (const auto& [key, run] : running_) {
      if (!run.view) continue;
      for (const DestView& d : run.view->dests) {
        if (d.method != vservice::Method::kDr) continue;
        uint64_t v = Read(d.stats->active);
        // Workers add concurrently: retry until the halving lands on the value it read.
        while (!d.stats->active.compare_exchange_weak(v, v / 2, std::memory_order_relaxed)) {
        }
      }
    }
    ArmDecay();
  });
}

ServiceEngine::~ServiceEngine() { Stop(); }

std::vector<Change> ServiceEngine::Diff(const vservice::VirtualServiceTable& next) const {
  std::vector<Change> removed, added, edited;
  for (const auto& [key, vs] : table_.services()) {
    if (next.Find(key) == nullptr) {
      Change c = MakeChange(ChangeKind::kDelService, key);
      c.dests_removed = vs.dests.size();
      removed.push_back(c);
    }
  }
  for (const auto& [key, vs] : next.services()) {
    const VirtualService* old = table_.Find(key);
    if (old == nullptr) {
      added.push_back(MakeChange(ChangeKind::kAddService, key));
      for (const auto& [addr, cfg] : vs.dests) {
        added.push_back(MakeChange(ChangeKind::kAddDest, key, addr));
      }
      continue;
    }
    if (!(old->config == vs.config)) edited.push_back(MakeChange(ChangeKind::kEditService, key));
    DiffDests(*old, vs, edited);
  }
  removed.insert(removed.end(), added.begin(), added.end());
  removed.insert(removed.end(), edited.begin(), edited.end());
  return removed;
}

Result<std::vector<std::shared_ptr<WorkerService>>> ServiceEngine::AdoptLookupSockets(
    const ServiceKey& key) {
  std::vector<std::shared_ptr<WorkerService>> workers;
  auto& tcp = options_.lookup.tcp;
  auto& udp = options_.lookup.udp;
  const bool is_tcp = key.proto == vservice::Proto::kTcp;
  if ((is_tcp ? tcp.size() : udp.size()) != pool_.size()) {
    return Internal(vservice::ToString(key) +
                    ": the director bound no socket per worker for the built-in lookup entry");
  }
  for (size_t i = 0; i < pool_.size(); ++i) {
    if (is_tcp) {
      workers.push_back(std::make_shared<TcpNatService>(pool_.context(i), clock_, options_.sched,
                                                        options_.nat, PassiveFailure(),
                                                        std::move(tcp[i])));
    } else {
      workers.push_back(std::make_shared<UdpDrService>(pool_.context(i), clock_, options_.sched,
                                                       std::move(udp[i])));
    }
  }
  (is_tcp ? tcp.clear() : udp.clear());
  return workers;
}

Result<std::vector<std::shared_ptr<WorkerService>>> ServiceEngine::BindService(
    const ServiceKey& key) {
  if (options_.builtin.contains(key)) return AdoptLookupSockets(key);
  std::vector<std::shared_ptr<WorkerService>> workers;
  const std::string what = vservice::ToString(key);
  for (size_t i = 0; i < pool_.size(); ++i) {
    asio::io_context& io = pool_.context(i);
    if (key.proto == vservice::Proto::kTcp) {
      auto l = net::TcpListener::Listen(io, {ToAsio(key.vip), key.port}, /*reuse_port=*/true);
      if (!l.ok()) {
        return l.status().Annotate(what +
                                   ": the port is in use; choose another port or stop "
                                   "what listens there");
      }
      workers.push_back(std::make_shared<TcpNatService>(io, clock_, options_.sched, options_.nat,
                                                        PassiveFailure(), std::move(l).value()));
    } else {
      auto socket = BindUdp(io, {ToAsio(key.vip), key.port});
      if (!socket.ok()) {
        return socket.status().Annotate(what +
                                        ": the port is in use; choose another port or "
                                        "stop what listens there");
      }
      workers.push_back(std::make_shared<UdpNatService>(
          io, clock_, options_.sched,
          UdpNatOptions{.session_timeout = timeouts_->udp(),
                        .timeouts = timeouts_,
                        .expire_nodest_conn = options_.nat.expire_nodest_conn},
          PassiveFailure(), std::move(socket).value()));
    }
  }
  return workers;
}

Status ServiceEngine::CheckBuiltins(vservice::VirtualServiceTable& next) const {
  // A table without them (-C, -R, a SIGHUP reload of the [[service]] tables) keeps them as they
  // run; their configuration may change like any entry's, their destinations are the agents.
  for (const ServiceKey& key : options_.builtin) {
    const VirtualService* now = table_.Find(key);
    const VirtualService* then = next.Find(key);
    if (then == nullptr && now != nullptr) {
      VSC_RETURN_IF_ERROR(next.AddService(key, now->config).status());
    } else if (then != nullptr && !then->dests.empty()) {
      return FailedPrecondition(
          vservice::ToString(key) +
          " is the built-in lookup service: its destinations are the registered agents (vsc "
          "realserver), not table entries; set an agent's weight with `vsc adm weight ID N` or "
          "drain it with `vsc adm drain ID`");
    }
  }
  return Status::Ok();
}

Result<std::vector<Change>> ServiceEngine::Commit(vservice::VirtualServiceTable next) {
  if (stopped_) return FailedPrecondition("the director is stopping; no change was made");
  VSC_RETURN_IF_ERROR(CheckBuiltins(next));
  for (const auto& [key, vs] : next.services()) {
    for (const auto& [addr, cfg] : vs.dests) {
      if (cfg.check) {
        VSC_RETURN_IF_ERROR(vservice::Validate(*cfg.check)
                                .Annotate("check of " + vservice::ToString(addr) + " in " +
                                          vservice::ToString(key)));
      }
    }
  }
  std::vector<Change> changes = Diff(next);
  // Bind every new socket first: a failure here leaves everything as it was.
  std::map<ServiceKey, std::vector<std::shared_ptr<WorkerService>>> bound;
  for (const auto& [key, vs] : next.services()) {
    if (table_.Find(key) != nullptr) continue;
    VSC_ASSIGN_OR_RETURN(bound[key], BindService(key));
  }
  // Nothing can fail from here on.
  for (const auto& [key, vs] : table_.services()) {
    if (next.Find(key) == nullptr) StopService(key);
  }
  vservice::VirtualServiceTable old = std::move(table_);
  table_ = std::move(next);
  for (const auto& [key, vs] : table_.services()) {
    SyncChecks(old.Find(key), &vs);
    if (auto it = bound.find(key); it != bound.end()) {
      StartService(vs, std::move(it->second));
    } else {
      Publish(key);
    }
  }
  for (const Change& c : changes) {
    spdlog::info("services: {} {}{}", KindName(c.kind), vservice::ToString(c.services[0]),
                 c.dest ? " " + vservice::ToString(*c.dest) : "");
  }
  return changes;
}

void ServiceEngine::StartService(const VirtualService& vs,
                                 std::vector<std::shared_ptr<WorkerService>> workers) {
  running_[vs.key].workers = std::move(workers);
  Publish(vs.key);  // posts the view before the start, so no flow runs without one
  for (size_t i = 0; i < pool_.size(); ++i) {
    pool_.Post(i, [w = running_[vs.key].workers[i]] { w->Start(); });
  }
  spdlog::info("services: {} listening on {} workers", vservice::ToString(vs.key), pool_.size());
}

void ServiceEngine::StopService(const ServiceKey& key) {
  auto it = running_.find(key);
  if (it == running_.end()) return;
  for (size_t i = 0; i < it->second.workers.size(); ++i) {
    pool_.Post(i, [w = it->second.workers[i]] { w->Stop(); });
  }
  if (const VirtualService* vs = table_.Find(key)) SyncChecks(vs, nullptr);
  running_.erase(it);
}

void ServiceEngine::SyncChecks(const VirtualService* old, const VirtualService* vs) {
  const ServiceKey key = vs != nullptr ? vs->key : old->key;
  if (old != nullptr) {
    for (const auto& [addr, cfg] : old->dests) {
      const bool kept = vs != nullptr && vs->dests.contains(addr) &&
                        EffectiveCheck(key.proto, vs->dests.at(addr)).has_value();
      if (!kept && EffectiveCheck(key.proto, cfg)) {
        (void)checker_.Remove(key, addr);
        verdicts_.erase({key, addr});
      }
      if (vs == nullptr || !vs->dests.contains(addr)) running_[key].dests.erase(addr);
    }
  }
  if (vs == nullptr) return;
  for (const auto& [addr, cfg] : vs->dests) {
    const std::optional<vservice::CheckConfig> check = EffectiveCheck(key.proto, cfg);
    if (!check) continue;
    const bool existed = old != nullptr && old->dests.contains(addr) &&
                         EffectiveCheck(key.proto, old->dests.at(addr)).has_value();
    if (existed) {
      (void)checker_.Update(key, addr, *check);
    } else {
      Verdict v;
      v.up = !check->alpha;
      verdicts_[{key, addr}] = v;
      (void)checker_.Add(key, addr, *check);  // validated by Commit
    }
  }
}

std::shared_ptr<ServiceView> ServiceEngine::BuildView(const VirtualService& vs, Running& run) {
  auto stats_of = [&run](const AddrPort& addr) {
    auto& stats = run.dests[addr];
    if (!stats) stats = std::make_shared<DestStats>();
    return stats;
  };
  std::shared_ptr<ServiceView> view;
  if (options_.builtin.contains(vs.key)) {
    // The registered servers of the VIP's family: a server is of its service's family, as in
    // ipvsadm (an IPv4 endpoint cannot take an IPv6 VIP's datagrams).
    // Copied only when some are of the other family (rare), not at every load publish.
    const ViewPtr cluster = plane_.PeekView();
    const std::vector<ViewServer>& all = cluster->services[LookupServiceIndex(vs.key.proto)];
    auto other_family = [&vs](const ViewServer& s) {
      return s.address.addr.family() != vs.key.vip.family();
    };
    const bool mixed = std::any_of(all.begin(), all.end(), other_family);
    std::vector<ViewServer> same_family;
    if (mixed) {
      std::remove_copy_if(all.begin(), all.end(), std::back_inserter(same_family), other_family);
    }
    const std::vector<ViewServer>& candidates = mixed ? same_family : all;
    std::vector<LookupDestInputs> inputs;
    for (const ViewServer& s : candidates) {
      LookupDestInputs in;
      if (const auto* rec = plane_.membership().Find(s.id)) {
        in.state = std::string(membership::StateName(rec->state));
      }
      in.stats = stats_of(s.address);
      inputs.push_back(std::move(in));
    }
    view = BuildLookupView(vs, candidates, inputs, ++version_);
  } else {
    std::vector<DestInputs> inputs;
    for (const auto& [addr, cfg] : vs.dests) {
      DestInputs in;
      if (auto v = verdicts_.find({vs.key, addr}); v != verdicts_.end()) {
        in.check_up = v->second.up;
        in.check_weight = v->second.weight;
        in.passive_down = v->second.passive_down;
        in.check_response_ms = v->second.response_ms;
        v->second.published_response_ms = v->second.response_ms;
      }
      if (!cfg.agent_id.empty()) {
        in.agent = plane_.membership().Find(cfg.agent_id);
      } else if (auto f = fronted_.find({vs.key.proto, addr}); f != fronted_.end()) {
        in.agent = plane_.membership().Find(f->second);
      }
      in.stats = stats_of(addr);
      inputs.push_back(std::move(in));
    }
    view = BuildServiceView(vs, inputs, ++version_);
  }
  view->stats = run.stats;
  view->sorry_stats = run.sorry;
  ShareSyncedState(vs, run, *view);
  return view;
}

void ServiceEngine::Publish(const ServiceKey& key) {
  const VirtualService* vs = table_.Find(key);
  auto it = running_.find(key);
  if (vs == nullptr || it == running_.end()) return;
  Running& run = it->second;
  std::shared_ptr<ServiceView> built = BuildView(*vs, run);
  if (ShareSchedTable(run.view.get(), *built, options_.sched)) ++sched_table_builds_;
  ServiceViewPtr view = std::move(built);
  run.view = view;
  for (size_t i = 0; i < run.workers.size(); ++i) {
    pool_.Post(i, [w = run.workers[i], view] { w->OnView(view); });
  }
}

void ServiceEngine::OnHealth(const ServiceKey& s, const AddrPort& d, bool up,
                             std::optional<uint32_t> weight) {
  auto it = verdicts_.find({s, d});
  if (it == verdicts_.end()) return;
  it->second.up = up;
  it->second.weight = weight;
  if (up) it->second.passive_down = false;
  Publish(s);
}

void ServiceEngine::OnProbe(const ServiceKey& s, const AddrPort& d, bool ok, Duration elapsed) {
  auto it = verdicts_.find({s, d});
  if (it == verdicts_.end()) return;
  Verdict& v = it->second;
  // Seed 003's T, measured by the director without costing the server anything: the check's
  // round trip (a failed probe counts with the time it took, its timeout at most).
  v.response_ms = EwmaStep(v.response_ms, ToMillis(elapsed), kCheckResponseAlpha);
  bool publish = false;
  if (auto svc = table_.services().find(s);
      svc != table_.services().end() && svc->second.config.scheduler == "dwlc" &&
      sched::DwlcWeightMoved(v.published_response_ms, v.response_ms,
                             options_.sched.dwlc_reference_ms)) {
    publish = true;
  }
  if (ok && v.passive_down) {
    v.passive_down = false;
    spdlog::info("health: {} of {} answers its check again; takes new flows", vservice::ToString(d),
                 vservice::ToString(s));
    publish = true;
  }
  if (publish) Publish(s);
}

DestFailureFn ServiceEngine::PassiveFailure() {
  return [this](const ServiceKey& s, const AddrPort& d, const std::string&) {
    asio::post(control_, [this, s, d] { OnPassiveFailure(s, d); });
  };
}

void ServiceEngine::OnPassiveFailure(const ServiceKey& s, const AddrPort& d) {
  auto it = verdicts_.find({s, d});
  // Agent-backed destinations without a check are watched by membership, not marked here.
  if (it == verdicts_.end() || it->second.passive_down) return;
  it->second.passive_down = true;
  (void)checker_.ProbeSoon(s, d);
  Publish(s);
}

void ServiceEngine::OnMembershipChanged() {
  FrontedIndex before = std::exchange(fronted_, BuildFrontedIndex(plane_.membership().Snapshot()));
  for (const auto& [key, vs] : table_.services()) {
    if (options_.builtin.contains(key)) {
      Publish(key);
      continue;
    }
    for (const auto& [addr, cfg] : vs.dests) {
      const FrontedKey fk{key.proto, addr};
      if (cfg.agent_id.empty() && !fronted_.contains(fk) && !before.contains(fk)) continue;
      Publish(key);
      break;
    }
  }
}

void ServiceEngine::Stop() {
  if (stopped_) return;
  stopped_ = true;
  decay_timer_.cancel();
  std::vector<ServiceKey> keys;
  for (const auto& [key, run] : running_) keys.push_back(key);
  for (const ServiceKey& key : keys) StopService(key);
}

ServiceViewPtr ServiceEngine::view(const ServiceKey& key) const {
  auto it = running_.find(key);
  return it == running_.end() ? nullptr : it->second.view;
}

}  // namespace vsc::director
