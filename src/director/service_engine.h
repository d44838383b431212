// ServiceEngine: the director's service runtime (issue 12, DESIGN §3-§5), the implementation of
// ServiceEditor. It owns the running VirtualServiceTable and, for every service, one
// WorkerService per worker on its own SO_REUSEPORT socket; it watches static destinations with
// the HealthChecker (DefaultStaticCheck when none is configured), follows agent-backed
// destinations through the ControlPlane's membership, and publishes one immutable ServiceView
// per service to the workers whenever a verdict, a membership state or the table changes.
//
// Built-in services: the lookup service's two entries (UDP dr and TCP nat on lookup_port) are
// ordinary entries of the table, declared by default and served like any other (UdpDrService,
// TcpNatService); their destinations are not in the table but the registered agents that
// declared the lookup endpoints, as the ControlPlane's ClusterView lists them
// (BuildLookupView). Their configuration (scheduler, persistence, sorry server) is edited like
// any entry's. Commit keeps them when the next table leaves them out (ipvsadm -C, -R, a SIGHUP
// reload) and refuses a next table that gives them destinations (FailedPrecondition saying so).
// Their sockets are bound by the director before the first Commit (EngineOptions::lookup).
//
// Commit binds every new socket before it changes anything: a port in use fails the whole
// commit and leaves everything as it was.
//
// Thread safety: every call on the control thread (the io_context given), after the workers'
// contexts exist. Lifetime: Stop() before the worker pool stops; the engine outlives the
// control thread's run.
#pragma once

#include <asio/io_context.hpp>
#include <asio/steady_timer.hpp>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <vector>

#include "common/clock.h"
#include "director/control_plane.h"
#include "director/fronted_index.h"
#include "director/health_checker.h"
#include "director/service_editor.h"
#include "director/service_view.h"
#include "director/service_view_builder.h"
#include "director/stats.h"
#include "director/sync_record.h"
#include "director/tcp_nat_service.h"
#include "director/worker_service.h"
#include "net/tcp_listener.h"
#include "net/udp_batch.h"
#include "net/worker_pool.h"

namespace vsc::director {

struct EngineOptions {
  sched::SchedulerOptions sched;
  NatOptions nat;
  net::FlowTimeoutValues timeouts;         // ipvsadm --set tcp tcpfin udp, at start
  std::set<vservice::ServiceKey> builtin;  // the lookup entries' keys
  // The built-in entries' sockets, one per worker each, bound on one port by the director.
  struct LookupSockets {
    std::vector<std::unique_ptr<net::TcpListener>> tcp;
    std::vector<std::unique_ptr<net::UdpBatchSocket>> udp;
  };
  LookupSockets lookup;
  // dr: how often a destination's recent-request count (its `active` figure) is halved.
  Duration dr_decay_period = std::chrono::milliseconds(200);
  // State sync with peer directors (issue 11): where the workers note templates and sessions;
  // nullptr when the director has no sync_peers.
  std::shared_ptr<SyncOutbox> sync;
};

class ServiceEngine : public ServiceEditor {
 public:
  ServiceEngine(asio::io_context& control, net::WorkerPool& pool, const Clock& clock,
                const ControlPlane& plane, EngineOptions options);
  ~ServiceEngine() override;

  const vservice::VirtualServiceTable& table() const override { return table_; }
  Result<std::vector<vservice::Change>> Commit(vservice::VirtualServiceTable next) override;
  std::vector<ServiceRuntime> Runtime() const override;
  Status ZeroCounters(const std::optional<vservice::ServiceKey>& key) override;
  net::FlowTimeoutValues Timeouts() const override { return timeouts_->Get(); }
  void SetTimeouts(const net::FlowTimeoutValues& values) override { timeouts_->Set(values); }
  asio::awaitable<FlowList> Flows() override;

  // Membership changed (a registration, a state, a load): republishes the services that have
  // agent-backed destinations.
  void OnMembershipChanged();
  // Stops every service on its worker (no new flows). Idempotent.
  void Stop();

  // The view last published for a service, or nullptr (unknown services).
  ServiceViewPtr view(const vservice::ServiceKey& key) const;

  // A template or UDP session a peer director sent (service_engine_sync.cc): adopted into the
  // service's table when this director runs the service and has the destination, else
  // ignored. False when ignored.
  bool AdoptSynced(const SyncRecord& record);
  // Scheduler tables built since start, for every service (ShareSchedTable).
  uint64_t sched_table_builds() const { return sched_table_builds_; }

 private:
  struct Running {
    std::vector<std::shared_ptr<WorkerService>> workers;
    std::shared_ptr<ServiceStats> stats = std::make_shared<ServiceStats>();
    std::shared_ptr<DestStats> sorry = std::make_shared<DestStats>();
    std::map<vservice::AddrPort, std::shared_ptr<DestStats>> dests;
    ServiceViewPtr view;
    // Kept across views while the persistence settings stay (a change starts a new table).
    std::shared_ptr<SharedPersistence> persistence;
    std::optional<vservice::Persistence> persistence_config;
    vservice::Family persistence_family = vservice::Family::kV4;
    std::shared_ptr<SessionHints> session_hints;  // UDP services with sync peers
  };
  struct Verdict {
    bool up = true;
    std::optional<uint32_t> weight;
    bool passive_down = false;
    double response_ms = 0;            // EWMA of the probes' durations (dwlc's T)
    double published_response_ms = 0;  // the figure the workers' view holds
  };
  using DestKey = std::pair<vservice::ServiceKey, vservice::AddrPort>;

  Result<std::vector<std::shared_ptr<WorkerService>>> BindService(const vservice::ServiceKey& key);
  // A built-in entry's data paths, on the sockets the director bound.
  Result<std::vector<std::shared_ptr<WorkerService>>> AdoptLookupSockets(
      const vservice::ServiceKey& key);
  // The built-in entries of `next` as Commit needs them: kept when left out, no destinations.
  Status CheckBuiltins(vservice::VirtualServiceTable& next) const;
  // The persistence table a view of `vs` shares (run's, or a new one when the settings
  // changed), and the session hints.
  void ShareSyncedState(const vservice::VirtualService& vs, Running& run, ServiceView& view);
  std::shared_ptr<ServiceView> BuildView(const vservice::VirtualService& vs, Running& run);
  void ArmDecay();
  void StartService(const vservice::VirtualService& vs,
                    std::vector<std::shared_ptr<WorkerService>> workers);
  void StopService(const vservice::ServiceKey& key);
  // Starts, updates and stops health checks so they match `vs` (old: what ran before).
  void SyncChecks(const vservice::VirtualService* old, const vservice::VirtualService* vs);
  void Publish(const vservice::ServiceKey& key);
  void OnHealth(const vservice::ServiceKey& s, const vservice::AddrPort& d, bool up,
                std::optional<uint32_t> weight);
  void OnProbe(const vservice::ServiceKey& s, const vservice::AddrPort& d, bool ok,
               Duration elapsed);
  // The workers' passive check (worker_service.h): posts OnPassiveFailure to the control thread.
  DestFailureFn PassiveFailure();
  // Marks `d` FAILING until its check, run at once, passes again.
  void OnPassiveFailure(const vservice::ServiceKey& s, const vservice::AddrPort& d);
  std::vector<vservice::Change> Diff(const vservice::VirtualServiceTable& next) const;
  ServiceRuntime RuntimeOf(const vservice::VirtualService& vs) const;
  // ipvsadm -Z keeps every counter running and remembers where it stood: Runtime() subtracts.
  Totals Zeroed(const vservice::ServiceKey& key, const std::string& dest, Totals now) const;

  asio::io_context& control_;
  net::WorkerPool& pool_;
  const Clock& clock_;
  const ControlPlane& plane_;
  EngineOptions options_;
  std::shared_ptr<net::FlowTimeouts> timeouts_;  // read by every open flow
  vservice::VirtualServiceTable table_;
  std::map<vservice::ServiceKey, Running> running_;
  std::map<DestKey, Verdict> verdicts_;
  FrontedIndex fronted_;  // static destinations a live agent fronts, from membership
  HealthChecker checker_;
  asio::steady_timer decay_timer_;
  std::map<std::pair<vservice::ServiceKey, std::string>, Totals> zero_base_;  // "" = service
  uint64_t version_ = 0;
  uint64_t sched_table_builds_ = 0;
  bool stopped_ = false;
};

}  // namespace vsc::director
