// ServiceEngine's figures: Runtime(), ZeroCounters() and Flows() (ipvsadm -L, -Z, -L -c).
#include <asio/co_spawn.hpp>
#include <asio/use_awaitable.hpp>
#include <type_traits>

#include "director/dest_picker.h"
#include "director/service_engine.h"

namespace vsc::director {
namespace {

// The totals both stats structs carry; a destination also has its open connections.
template <class S>
Totals TotalsOf(const S& s) {
  Totals t;
  t.conns = Read(s.conns);
  t.in_packets = Read(s.packets_in);
  t.out_packets = Read(s.packets_out);
  t.in_bytes = Read(s.bytes_in);
  t.out_bytes = Read(s.bytes_out);
  if constexpr (std::is_same_v<S, DestStats>) t.active = Read(s.active);
  return t;
}

template <class R>
void Fill(R& r, const Totals& t) {
  r.connections = t.conns;
  r.packets_in = t.in_packets;
  r.packets_out = t.out_packets;
  r.bytes_in = t.in_bytes;
  r.bytes_out = t.out_bytes;
}

// The inverse of Fill: the totals a runtime record shows.
template <class R>
Totals Shown(const R& r) {
  Totals t;
  t.conns = r.connections;
  t.in_packets = r.packets_in;
  t.out_packets = r.packets_out;
  t.in_bytes = r.bytes_in;
  t.out_bytes = r.bytes_out;
  return t;
}

}  // namespace

Totals ServiceEngine::Zeroed(const vservice::ServiceKey& key, const std::string& dest,
                             Totals now) const {
  auto it = zero_base_.find({key, dest});
  if (it == zero_base_.end()) return now;
  const Totals& b = it->second;
  now.conns -= std::min(now.conns, b.conns);
  now.in_packets -= std::min(now.in_packets, b.in_packets);
  now.out_packets -= std::min(now.out_packets, b.out_packets);
  now.in_bytes -= std::min(now.in_bytes, b.in_bytes);
  now.out_bytes -= std::min(now.out_bytes, b.out_bytes);
  return now;
}

ServiceRuntime ServiceEngine::RuntimeOf(const vservice::VirtualService& vs) const {
  ServiceRuntime r;
  r.key = vs.key;
  auto it = running_.find(vs.key);
  if (it == running_.end() || !it->second.view) return r;
  const ServiceView& view = *it->second.view;
  Fill(r, Zeroed(vs.key, "", TotalsOf(*view.stats)));
  r.no_dest = Read(view.stats->no_dest);
  r.malformed = Read(view.stats->malformed);
  r.too_large = Read(view.stats->too_large);
  r.flows_ended = Read(view.stats->flows_ended);
  r.no_descriptor = Read(view.stats->no_descriptor);
  for (const DestView& d : view.dests) {
    DestRuntime dr;
    dr.dest = d.dest;
    dr.server_id = d.server_id;
    dr.usable = sched::CanTakeNewWork(d.backend);
    dr.state = d.state;
    dr.effective_weight = d.backend.weight;
    const Totals t = Zeroed(vs.key, vservice::ToString(d.dest), TotalsOf(*d.stats));
    Fill(dr, t);
    dr.active_conns = t.active;
    dr.inactive_conns = Read(d.stats->inactive);
    dr.connect_failures = Read(d.stats->connect_failures);
    dr.unreachable = Read(d.stats->unreachable);
    r.dests.push_back(std::move(dr));
  }
  for (const CheckSnapshot& c : checker_.Snapshot()) {
    if (!(c.service == vs.key)) continue;
    for (DestRuntime& dr : r.dests) {
      if (dr.dest == c.dest) dr.check_result = c.last_result;
    }
  }
  return r;
}

std::vector<ServiceRuntime> ServiceEngine::Runtime() const {
  std::vector<ServiceRuntime> out;
  for (const auto& [key, vs] : table_.services()) out.push_back(RuntimeOf(vs));
  return out;
}

Status ServiceEngine::ZeroCounters(const std::optional<vservice::ServiceKey>& key) {
  if (key && table_.Find(*key) == nullptr) {
    return NotFound("No such service: " + vservice::ToString(*key) +
                    "; list the services with vsc adm -L -n");
  }
  for (const auto& [k, vs] : table_.services()) {
    if (key && !(k == *key)) continue;
    const ServiceRuntime r = RuntimeOf(vs);  // current figures, net of the last zero
    zero_base_[{k, ""}] += Shown(r);
    for (const DestRuntime& d : r.dests) zero_base_[{k, vservice::ToString(d.dest)}] += Shown(d);
  }
  return Status::Ok();
}

namespace {

asio::awaitable<std::vector<FlowEntry>> ListOn(std::shared_ptr<WorkerService> worker,
                                               TimePoint now) {
  std::vector<FlowEntry> out;
  worker->ListFlows(now, out);
  co_return out;
}

}  // namespace

asio::awaitable<ServiceEditor::FlowList> ServiceEngine::Flows() {
  // A service's workers[i] runs on pool_.context(i) (BindService, AdoptLookupSockets). Copied
  // first: the table may change while this coroutine waits for a worker.
  std::vector<std::pair<size_t, std::shared_ptr<WorkerService>>> workers;
  for (const auto& [key, run] : running_) {
    for (size_t i = 0; i < run.workers.size(); ++i) workers.emplace_back(i, run.workers[i]);
  }
  FlowList list;
  const TimePoint now = clock_.Now();
  for (const auto& [i, worker] : workers) {
    std::vector<FlowEntry> part =
        co_await asio::co_spawn(pool_.context(i), ListOn(worker, now), asio::use_awaitable);
    const size_t room = kMaxListedFlows - list.entries.size();
    if (part.size() > room) {
      part.resize(room);
      list.truncated = true;
    }
    list.entries.insert(list.entries.end(), part.begin(), part.end());
    if (list.truncated) break;
  }
  // The persistence templates, one table per service for every worker (shared_persistence.h).
  for (const auto& [key, run] : running_) {
    if (list.truncated || !run.view) break;
    for (const PersistenceTemplate& t : ListTemplates(*run.view, now)) {
      if (list.entries.size() == kMaxListedFlows) {
        list.truncated = true;
        break;
      }
      list.entries.push_back({key.proto, "NONE", t.network, key.vip_port(), t.dest, t.expires_in});
    }
  }
  co_return list;
}

}  // namespace vsc::director
