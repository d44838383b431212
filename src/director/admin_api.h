// AdminApi: the director's HTTP/JSON admin API and Prometheus /metrics (DESIGN §11).
//   GET  /v1/status                      services, real servers, states, weights, counters, rates
//   POST /v1/servers/{id}/weight         {"weight": N}
//   POST /v1/servers/{id}/drain          DRAINING: weight 0, existing flows finish
//   POST /v1/servers/{id}/remove         forget a DRAINING or DOWN server
//   POST /v1/scheduler                   {"scheduler": "rr"}: the lookup entries' scheduler
//   POST /v1/persistence                 {"timeout_s": 360, "netmask": "255.255.255.0"}: theirs
//   GET  /v1/replication                 per replica: applied seq, lag, digest, replication
//                                        state, window fill; queue depths; log range; epoch
//   POST /v1/verify                      sequences a checksum marker: {"seq": N}
//   GET  /v1/verify/{seq}                each replica's checksum at that seq, OK / MISMATCH /
//                                        PENDING...; "complete" once every replica answered
//   GET  /metrics                        Prometheus text format
//   /v1/services...                      virtual services (service_routes.h), once
//                                        SetServices gave the editor; 409 before
// Every request needs `Authorization: Bearer <token>`; answers are JSON, errors are
// {"error": "..."} with a 4xx status. A change (any method but GET) is answered through Serve
// only once every worker holds the view it published (SetViewBarrier), so the client's next
// request already sees it. Runs on the control thread (the HttpServer's context).
#pragma once

#include <asio/awaitable.hpp>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/clock.h"
#include "director/control_plane.h"
#include "director/control_server.h"
#include "director/director_config.h"
#include "director/read_router.h"
#include "director/replicator.h"
#include "director/service_editor.h"
#include "director/service_routes.h"
#include "director/stats.h"
#include "director/view_barrier.h"
#include "director/write_server.h"
#include "net/http_server.h"

namespace vsc::director {

class AdminApi {
 public:
  // `service_port`: the lookup port; /v1/status lists the built-in lookup entries on it.
  AdminApi(ControlPlane& plane, ControlServer& control, const DirectorConfig& config,
           const Clock& clock, std::string token, uint16_t service_port);

  // Replication parts, all null when replication is off (its endpoints then answer 409).
  void SetReplication(Replicator* replicator, WriteServer* writes, ReadRouter* reads) {
    replicator_ = replicator;
    writes_ = writes;
    reads_ = reads;
  }

  // More Prometheus text for /metrics from another part of the director (the ring port).
  void AddMetrics(std::function<std::string()> render) {
    extra_metrics_.push_back(std::move(render));
  }
  // The virtual-service runtime behind /v1/services and the per-service metrics; it outlives
  // this AdminApi.
  void SetServices(ServiceEditor* services);

  // Before the first request: what a change waits for before it is answered, and for how long
  // at most (without a barrier, a change is answered as soon as it is made).
  void SetViewBarrier(ViewBarrier barrier, Duration timeout = std::chrono::seconds(5)) {
    view_barrier_ = std::move(barrier);
    view_barrier_timeout_ = timeout;
  }

  // Handles the request; a change that succeeded (2xx) is answered once the view barrier has
  // passed, or with 503 if the workers did not get there within the timeout.
  asio::awaitable<net::HttpResponse> Serve(net::HttpRequest request);
  // The answer as soon as the change is made, without waiting for the workers.
  net::HttpResponse Handle(const net::HttpRequest& request);
  // Samples counters for the rate estimator; call once a second.
  void SampleRates();

 private:
  bool Authorized(const net::HttpRequest& req) const;
  net::HttpResponse Status();
  net::HttpResponse Metrics();
  net::HttpResponse ServerAction(const std::string& id, const std::string& action,
                                 const std::string& body);
  net::HttpResponse SetScheduler(const std::string& body);
  net::HttpResponse SetPersistence(const std::string& body);
  net::HttpResponse Replication();
  net::HttpResponse StartVerify();
  net::HttpResponse VerifyResult(const std::string& seq);
  void ReplicationMetrics(std::ostream& o);
  void LookupMetrics(std::ostream& o);
  // The runtime of the built-in lookup entries, UDP first, then TCP (empty without services_).
  std::vector<ServiceRuntime> LookupRuntime() const;
  // Edits both built-in entries' configuration through services_ (409 without it).
  net::HttpResponse EditLookup(const std::function<void(vservice::ServiceConfig&)>& edit);

  ControlPlane& plane_;
  ControlServer& control_;
  const DirectorConfig& config_;
  const Clock& clock_;
  std::string token_;
  uint16_t service_port_;
  RateEstimator rates_;
  Replicator* replicator_ = nullptr;
  WriteServer* writes_ = nullptr;
  ReadRouter* reads_ = nullptr;
  std::vector<std::function<std::string()>> extra_metrics_;
  ServiceEditor* services_ = nullptr;
  std::unique_ptr<ServiceRoutes> service_routes_;  // with services_
  ViewBarrier view_barrier_;
  Duration view_barrier_timeout_{};
};

}  // namespace vsc::director
