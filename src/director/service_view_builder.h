// BuildServiceView: the pure rule that turns one virtual service of the table, plus what the
// control thread knows of each destination (health-check verdict, passive failures, the
// agent's membership record), into the ServiceView the workers schedule from (DESIGN §3, §5).
//
// A destination is usable (takes new work) when:
// - static (no agent_id): its health check says UP (a static destination always has one) and
//   no connect failed since the last probe;
// - agent-backed: the agent is registered and its membership state accepts new work
//   (ACTIVE), and its check, if one is configured, says UP;
// - fronted (static, and a live agent registered this address as a local service it fronts,
//   fronted_index.h): both — its check says UP, no connect failed, and the agent is ACTIVE.
//   (EffectiveCheck below says which check watches a destination.)
// Weight: the destination's own (ipvsadm -w), a MISC_CHECK misc_dynamic weight when one was
// reported, 0 when the agent is drained or weighted 0 by the operator. Weight 0 is quiescent:
// no new work, open flows go on. An agent-backed or fronted destination carries the agent's
// heartbeat load (run queue, response time) for ll and dwlc, and its id. A destination that is down
// under inhibit_on_failure shows weight 0, as keepalived programs it; otherwise it keeps its weight
// and is unavailable.
//
// Pure: no I/O, no clock; the stats pointers are passed through untouched.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "director/service_view.h"
#include "membership/records.h"
#include "vservice/virtual_service_table.h"

namespace vsc::director {

struct DestInputs {
  bool check_up = true;  // the check's verdict; true while a check has not said otherwise
  std::optional<uint32_t> check_weight;  // misc_dynamic
  bool passive_down = false;             // a connect failed since the last successful probe
  double check_response_ms = 0;          // the check's response-time EWMA; 0 = none measured
  // agent-backed: its record, if registered; static: the live agent fronting it, if any
  const membership::ServerRecord* agent = nullptr;
  std::shared_ptr<DestStats> stats;
};

// `inputs` is aligned with `service.dests` (same size, same order).
std::shared_ptr<ServiceView> BuildServiceView(const vservice::VirtualService& service,
                                              const std::vector<DestInputs>& inputs,
                                              uint64_t version);

// A view of `service` (version, key, configuration) with room for `dests` destinations and
// none yet: the start of every view builder.
std::shared_ptr<ServiceView> NewServiceView(const vservice::VirtualService& service, size_t dests,
                                            uint64_t version);

// The check a destination is watched by: its own; for a static destination without one, every
// second, DefaultStaticCheck (a TCP connect) in a TCP service and a UDP_CHECK with no reply
// required (fails on an ICMP port unreachable within 1 s) in a UDP service; none for an
// agent-backed destination without one (membership watches it).
std::optional<vservice::CheckConfig> EffectiveCheck(vservice::Proto proto,
                                                    const vservice::DestConfig& dest);

}  // namespace vsc::director
