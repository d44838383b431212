// FlowEntry: one line of ipvsadm -L -c, as the workers report it (WorkerService::ListFlows) and
// the admin API lists it (GET /v1/services/connections).
#pragma once

#include <string_view>

#include "common/clock.h"
#include "vservice/ip_address.h"
#include "vservice/service_key.h"

namespace vsc::director {

// One entry of ipvsadm -L -c: an open connection, a UDP session or a persistence template.
struct FlowEntry {
  vservice::Proto proto = vservice::Proto::kTcp;
  // "ESTABLISHED", "FIN_WAIT" (half-closed), "UDP" (a UDP session), "NONE" (a template)
  std::string_view state;
  vservice::AddrPort source;  // the client; a template's network with port 0
  vservice::AddrPort vip;
  vservice::AddrPort dest;
  Duration expires_in{};  // until the entry's timeout, at the current rate of nothing happening
};

}  // namespace vsc::director
