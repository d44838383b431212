// TcpNatService: one TCP virtual service with `nat` destinations on one worker (DESIGN §3): accept
// a client, pick a destination from the current ServiceView, connect within connect_timeout,
// and proxy both ways (net::Proxy: splice for bulk, copy for small, half-close kept, bounded
// buffers). When a connect fails the flow is redispatched to another destination, so the
// client sees no failure while a usable destination exists, and the failure is reported to the
// control thread (passive check). With no usable destination the sorry server takes the flow;
// without one the client is closed and the refusal counted. Out of descriptors (the accept or
// the connect fails with EMFILE/ENFILE) the client is refused at once, not left hanging, and
// counted apart (ServiceStats::no_descriptor).
//
// Each proxied connection is registered by destination, so a new view can end those that
// FlowsToEnd names (a removed destination under expire_nodest_conn, a destination marked down
// with on_marked_down = shutdown-sessions): both sides are reset and the end counted.
//
// Owned through shared_ptr: each session holds a reference, so the service may be dropped by
// the engine (service deleted) while sessions finish on the worker. Every method on the worker.
#pragma once

#include <asio.hpp>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "common/clock.h"
#include "director/dest_picker.h"
#include "director/flow_expiry.h"
#include "director/service_view.h"
#include "director/worker_service.h"
#include "net/tcp_listener.h"
#include "net/tcp_proxy.h"

namespace vsc::director {

struct NatOptions {
  Duration connect_timeout = std::chrono::seconds(2);
  net::ProxyOptions proxy;
  bool expire_nodest_conn = false;  // flow_expiry.h
};

class TcpNatService : public WorkerService, public std::enable_shared_from_this<TcpNatService> {
 public:
  // `listener`: bound (SO_REUSEPORT) on this worker's io_context, not started.
  TcpNatService(asio::io_context& io, const Clock& clock, sched::SchedulerOptions sched,
                NatOptions options, DestFailureFn on_failure,
                std::unique_ptr<net::TcpListener> listener)
      : io_(io),
        clock_(clock),
        picker_(sched),
        options_(options),
        on_failure_(std::move(on_failure)),
        listener_(std::move(listener)) {}

  void Start() override;
  void Stop() override;
  void OnView(ServiceViewPtr view) override;
  void ListFlows(TimePoint now, std::vector<FlowEntry>& out) const override;

 private:
  struct OpenFlow {
    vservice::AddrPort client;
    bool sorry = false;  // to the sorry server, which no destination rule reaches
    std::shared_ptr<net::ProxyHandle> handle;
  };
  using OpenFlows = std::multimap<vservice::AddrPort, OpenFlow>;  // by destination
  // Ends the open connections FlowsToEnd named; returns how many.
  size_t EndFlows(const FlowsToEndEntry& e);
  static asio::awaitable<void> Session(std::shared_ptr<TcpNatService> self,
                                       asio::ip::tcp::socket client);
  struct Dispatched {
    std::optional<asio::ip::tcp::socket> socket;  // connected to dests[index], if any
    size_t index = 0;
    bool out_of_descriptors = false;  // no local socket: no destination was to blame
  };
  // Connects to a usable destination, trying others after a failure.
  static asio::awaitable<Dispatched> Dispatch(std::shared_ptr<TcpNatService> self,
                                              ServiceViewPtr view, vservice::AddrPort client);

  asio::io_context& io_;
  const Clock& clock_;
  DestPicker picker_;
  NatOptions options_;
  DestFailureFn on_failure_;
  std::unique_ptr<net::TcpListener> listener_;
  OpenFlows open_;  // proxied connections, the sorry server's too
};

// Conversions between the table's addresses and Asio's.
asio::ip::address ToAsio(const vservice::IpAddress& ip);
vservice::IpAddress FromAsio(const asio::ip::address& a);

}  // namespace vsc::director
