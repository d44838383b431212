// ServiceEditor: the seam between the director's operator surface (admin routes /v1/services,
// `vsc adm` ipvsadm options, the saved table, SIGHUP reload) and the service runtime that owns
// the listeners, data paths and health checks of every virtual service (DESIGN §3, §5, §11).
//
// Every change, whether one ipvsadm verb, a `-R` restore or a SIGHUP reload, is expressed as a
// whole next table: the caller copies table(), edits the copy with VirtualServiceTable's own
// operations (which validate and return what changed), and hands the copy to Commit. Commit
// applies only the difference to the running services (a service whose key and configuration
// are unchanged keeps its listeners and flows), and is atomic: when any part fails (a port
// already in use, a check that does not validate) nothing changed and the error says what.
//
// Thread safety: none; every call on the director's control thread.
#pragma once

#include <asio/awaitable.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "director/flow_entry.h"
#include "net/flow_timeouts.h"
#include "vservice/ip_address.h"
#include "vservice/service_key.h"
#include "vservice/virtual_service_table.h"

namespace vsc::director {

// What the runtime knows of one destination beyond its configuration: for listings (ipvsadm
// -L's ActiveConn/InActConn columns, the check state), the admin API and metrics.
struct DestRuntime {
  vservice::AddrPort dest;
  std::string server_id;          // the agent's id, or empty for a static server
  bool usable = false;            // membership (agent) and health check (static) both say so
  std::string state;              // "ACTIVE", "DRAINING", "DOWN", ... or "UP"/"DOWN" for a check
  std::string check_result;       // last check result ("ok: connected", "failed: ..."), or empty
  uint32_t effective_weight = 0;  // after inhibit_on_failure / misc_dynamic / drain
  uint64_t active_conns = 0;      // cluster-wide, across workers
  uint64_t inactive_conns = 0;
  uint64_t connections = 0;  // totals since start or the last zero (ipvsadm -Z)
  uint64_t packets_in = 0;
  uint64_t packets_out = 0;
  uint64_t bytes_in = 0;
  uint64_t bytes_out = 0;
  uint64_t connect_failures = 0;  // nat: connects that failed (each flow was redispatched)
  uint64_t unreachable = 0;  // UDP nat: datagrams answered ICMP port unreachable (session moved)
};

struct ServiceRuntime {
  vservice::ServiceKey key;
  std::vector<DestRuntime> dests;  // in the table's destination order
  uint64_t connections = 0;
  uint64_t packets_in = 0;
  uint64_t packets_out = 0;
  uint64_t bytes_in = 0;
  uint64_t bytes_out = 0;
  // Refusals since start (not zeroed by ipvsadm -Z): no usable destination and no sorry
  // server; for the lookup entry over UDP, datagrams that are no lookup request or too large.
  uint64_t no_dest = 0;
  uint64_t malformed = 0;
  uint64_t too_large = 0;
  // nat: open connections / sessions the director closed at a change (flow_expiry.h)
  uint64_t flows_ended = 0;
  // TCP: clients refused at once because the director was out of descriptors (EMFILE/ENFILE on
  // accept or connect); not zeroed by -Z
  uint64_t no_descriptor = 0;
};

class ServiceEditor {
 public:
  virtual ~ServiceEditor() = default;

  // The running table.
  virtual const vservice::VirtualServiceTable& table() const = 0;

  // Makes `next` the running table, applying only what differs from table(). Returns the
  // changes applied, in order (removed services first, then added, then edited). Atomic: on an
  // error nothing changed.
  virtual Result<std::vector<vservice::Change>> Commit(vservice::VirtualServiceTable next) = 0;

  // Runtime figures of every service, in table order (ipvsadm -L, GET /v1/services, /metrics).
  virtual std::vector<ServiceRuntime> Runtime() const = 0;

  // ipvsadm -Z: zeroes the totals of one service, or of every service when `key` is empty.
  virtual Status ZeroCounters(const std::optional<vservice::ServiceKey>& key) = 0;

  // ipvsadm --set tcp tcpfin udp and -L --timeout (net/flow_timeouts.h): the connection
  // timeouts every open flow follows. SetTimeouts keeps a value given as zero.
  virtual net::FlowTimeoutValues Timeouts() const = 0;
  virtual void SetTimeouts(const net::FlowTimeoutValues& values) = 0;

  // ipvsadm -L -c: the open connections, UDP sessions and persistence templates of every
  // service, gathered from the workers (at most kMaxListedFlows; `truncated` then).
  struct FlowList {
    std::vector<FlowEntry> entries;
    bool truncated = false;
  };
  static constexpr size_t kMaxListedFlows = 100000;
  virtual asio::awaitable<FlowList> Flows() = 0;
};

// An editor that wraps another and changes only how a table is committed (saving it, keeping it
// in etcd): every other call goes to the inner editor, which outlives it.
class ForwardingServiceEditor : public ServiceEditor {
 public:
  explicit ForwardingServiceEditor(ServiceEditor& inner) : inner_(inner) {}

  const vservice::VirtualServiceTable& table() const override { return inner_.table(); }
  std::vector<ServiceRuntime> Runtime() const override { return inner_.Runtime(); }
  Status ZeroCounters(const std::optional<vservice::ServiceKey>& key) override {
    return inner_.ZeroCounters(key);
  }
  net::FlowTimeoutValues Timeouts() const override { return inner_.Timeouts(); }
  void SetTimeouts(const net::FlowTimeoutValues& values) override { inner_.SetTimeouts(values); }
  asio::awaitable<FlowList> Flows() override { return inner_.Flows(); }

 protected:
  ServiceEditor& inner_;
};

}  // namespace vsc::director
