#include "director/service_view_builder.h"

#include "membership/state.h"
#include "sched/hash.h"

namespace vsc::director {
namespace {

DestView BuildDest(vservice::Proto proto, const vservice::AddrPort& addr,
                   const vservice::DestConfig& config, const DestInputs& in) {
  DestView d;
  d.dest = addr;
  d.method = config.method;
  d.server_id = config.agent_id.empty() && in.agent ? in.agent->reg.id : config.agent_id;
  d.u_threshold = config.u_threshold;
  d.check_down = !in.check_up;
  d.shutdown_sessions = config.shutdown_sessions;
  d.stats = in.stats;
  d.backend.key = sched::StableKey(vservice::ToString(addr));
  uint32_t weight = in.check_weight.value_or(config.weight);
  bool available = in.check_up && !in.passive_down;
  // dwlc's T: what the director's check measures, unless the destination is a registered
  // agent's own (it reports its lookups' response time in its heartbeats).
  d.backend.response_ms = in.check_response_ms;
  if (config.agent_id.empty() && in.agent == nullptr) {
    d.state = in.check_up ? (in.passive_down ? "FAILING" : "UP") : "DOWN";
  } else if (in.agent == nullptr) {
    available = false;
    d.state = "UNREGISTERED";
  } else {
    available = available && membership::AcceptsNewWork(in.agent->state);
    if (in.agent->weight == 0) weight = 0;  // drained, or weight 0 set by the operator
    d.backend.run_queue = in.agent->load.run_queue;
    if (!config.agent_id.empty() || in.check_response_ms <= 0) {
      d.backend.response_ms = in.agent->load.response_ms;
    }
    d.state = std::string(membership::StateName(in.agent->state));
    if (!in.check_up) d.state += ", check DOWN";
    if (in.passive_down) {
      d.state += proto == vservice::Proto::kTcp ? ", connect failed" : ", port unreachable";
    }
  }
  const bool inhibited = !in.check_up && config.check && config.check->inhibit_on_failure;
  if (inhibited) weight = 0;
  if (available && weight == 0) d.state = "QUIESCENT";
  d.backend.weight = weight;
  d.backend.available = available;
  return d;
}

}  // namespace

std::shared_ptr<ServiceView> NewServiceView(const vservice::VirtualService& service, size_t dests,
                                            uint64_t version) {
  auto view = std::make_shared<ServiceView>();
  view->version = version;
  view->key = service.key;
  view->config = service.config;
  view->dests.reserve(dests);
  return view;
}

std::shared_ptr<ServiceView> BuildServiceView(const vservice::VirtualService& service,
                                              const std::vector<DestInputs>& inputs,
                                              uint64_t version) {
  auto view = NewServiceView(service, service.dests.size(), version);
  size_t i = 0;
  for (const auto& [addr, config] : service.dests) {
    view->dests.push_back(BuildDest(service.key.proto, addr, config, inputs.at(i++)));
  }
  return view;
}

std::optional<vservice::CheckConfig> EffectiveCheck(vservice::Proto proto,
                                                    const vservice::DestConfig& dest) {
  if (dest.check) return dest.check;
  if (!dest.agent_id.empty()) return std::nullopt;
  if (proto == vservice::Proto::kTcp) return vservice::DefaultStaticCheck();
  vservice::CheckConfig udp = vservice::DefaultCheck(vservice::CheckType::kUdp);
  udp.delay_loop = std::chrono::seconds(1);
  udp.connect_timeout = std::chrono::seconds(1);
  return udp;
}

}  // namespace vsc::director
