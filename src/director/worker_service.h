// WorkerService: one virtual service's data path on one worker (TcpNatService, UdpNatService),
// as the ServiceEngine drives it, and what ipvsadm -L -c lists of it. Every call is posted to the
// worker's thread: OnView before the first Start, so no flow is accepted before the service has a
// view.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "common/clock.h"
#include "director/flow_entry.h"
#include "director/service_view.h"

namespace vsc::director {

// The passive check (issue 12): a flow to `dest` of `service` failed in a way that says the
// destination is gone (a TCP connect failed, a UDP destination answered ICMP port unreachable),
// for `reason`. Called on the worker's thread; the engine marks the destination and probes it.
using DestFailureFn =
    std::function<void(const vservice::ServiceKey& service, const vservice::AddrPort& dest,
                       const std::string& reason)>;

class WorkerService {
 public:
  virtual ~WorkerService() = default;
  virtual void OnView(ServiceViewPtr view) = 0;
  // Starts serving on the socket bound at Commit time.
  virtual void Start() = 0;
  // Stops taking new flows; open ones finish on their own.
  virtual void Stop() = 0;
  // Appends this worker's open flows and persistence templates (ipvsadm -L -c). Paths that keep
  // no per-flow state (dr) append nothing.
  virtual void ListFlows(TimePoint now, std::vector<FlowEntry>& out) const {
    (void)now;
    (void)out;
  }
};

}  // namespace vsc::director
