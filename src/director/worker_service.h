// WorkerService: one virtual service's data path on one worker (TcpNatService, UdpNatService),
// as the ServiceEngine drives it. Every call is posted to the worker's thread: OnView before the
// first Start, so no flow is accepted before the service has a view.
#pragma once

#include "director/service_view.h"

namespace vsc::director {

class WorkerService {
 public:
  virtual ~WorkerService() = default;
  virtual void OnView(ServiceViewPtr view) = 0;
  // Starts serving on the socket bound at Commit time.
  virtual void Start() = 0;
  // Stops taking new flows; open ones finish on their own.
  virtual void Stop() = 0;
};

}  // namespace vsc::director
