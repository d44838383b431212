// VirtualServiceTable: the director's virtual services and their destinations, in the ipvsadm
// model (DESIGN.md §3; shared/reference/virtual_services.md §1).
//
// A service is (protocol, VIP, port) with a scheduler, optional persistence (timeout, client
// netmask), one-packet scheduling (UDP only) and an optional sorry server. A destination is
// address:port with a forwarding method, a weight, upper/lower connection thresholds, an
// optional agent server id (a `vsc realserver` that registers; empty = a static server watched
// by health checks only) and an optional health check.
//
// Every operation validates its whole input before it changes anything, so a failed call
// changes nothing (atomic); it returns what changed (Katran style) or an error whose message
// starts with ipvsadm's own text for that case (libipvs ipvs_strerror(), ipvsadm.c fail()).
//
// Pure: no I/O, no clock, no threads. Owned by the director's control thread; not thread safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "vservice/check_config.h"
#include "vservice/ip_address.h"
#include "vservice/service_key.h"

namespace vsc::vservice {

// dr: direct return, vsc's forward-header method for vsc-aware UDP servers (ipvsadm -g,
// listed as "Route"). nat: full proxy through the director, for any TCP or UDP server
// (ipvsadm -m, "Masq").
enum class Method : uint8_t { kDr, kNat };
std::string_view MethodName(Method method);   // "dr" / "nat"
std::string_view ForwardName(Method method);  // "Route" / "Masq", ipvsadm -L's Forward column

inline constexpr uint32_t kMaxPersistenceTimeout = 86400 * 31;  // ipvsadm MAX_TIMEOUT
inline constexpr uint32_t kDefaultPersistenceTimeout = 360;  // libipvs IPVS_SVC_PERSISTENT_TIMEOUT
inline constexpr uint32_t kMaxWeight = 65535;
inline constexpr uint32_t kMaxThreshold = 2147483647;         // ipvsadm accepts 0..INT_MAX
inline constexpr std::string_view kDefaultScheduler = "wlc";  // ipvsadm DEF_SCHED

struct Persistence {
  uint32_t timeout_s = kDefaultPersistenceTimeout;  // 1..kMaxPersistenceTimeout
  int prefix_len = 32;  // client netmask: IPv4 0..32, IPv6 1..128 (ipvsadm -M)
  friend bool operator==(const Persistence&, const Persistence&) = default;
};

struct ServiceConfig {
  std::string scheduler{kDefaultScheduler};  // one of sched::SchedulerNames()
  std::optional<Persistence> persistence;
  bool one_packet = false;  // ipvsadm -o: schedule every datagram, keep no session (UDP only)
  std::optional<AddrPort> sorry_server;  // keepalived sorry_server: used when no dest is up
  friend bool operator==(const ServiceConfig&, const ServiceConfig&) = default;
};

struct DestConfig {
  // nat when none is given, unlike ipvsadm's -g: nat works with any server, while vsc's dr
  // needs a vsc-aware UDP server (kernel DR needed only the VIP on the server's loopback).
  Method method = Method::kNat;
  uint32_t weight = 1;       // 0..65535; 0 = quiescent (no new work, existing flows stay)
  uint32_t u_threshold = 0;  // ipvsadm -x: no new work at this many connections; 0 = none
  uint32_t l_threshold = 0;  // ipvsadm -y: work again below this; 0 = 3/4 of u_threshold
  std::string agent_id;      // the registering vsc realserver's id; empty = static server
  std::optional<CheckConfig> check;
  // HAProxy's `on-marked-down shutdown-sessions`: when its check marks it down, its open
  // connections and UDP sessions are closed at once (otherwise they go on).
  bool shutdown_sessions = false;
  friend bool operator==(const DestConfig&, const DestConfig&) = default;
};

struct VirtualService {
  ServiceKey key;
  ServiceConfig config;
  std::map<AddrPort, DestConfig> dests;  // ipvsadm order: address, then port
  friend bool operator==(const VirtualService&, const VirtualService&) = default;
};

enum class ChangeKind : uint8_t {
  kAddService,
  kEditService,
  kDelService,
  kAddDest,
  kEditDest,
  kDelDest,
  kClear,
};

// What one successful operation changed.
struct Change {
  ChangeKind kind = ChangeKind::kClear;
  std::vector<ServiceKey> services;  // the service touched; for kClear every service removed
  std::optional<AddrPort> dest;      // the destination, for the *Dest kinds
  size_t dests_removed = 0;          // destinations that went with kDelService / kClear
  bool modified = true;              // false when an edit set exactly what was there
  friend bool operator==(const Change&, const Change&) = default;
};

struct TableLimits {
  size_t max_services = 4096;
  size_t max_dests_per_service = 4096;
};

class VirtualServiceTable {
 public:
  explicit VirtualServiceTable(TableLimits limits = {}) : limits_(limits) {}

  // ipvsadm -A. AlreadyExists "Service already exists", InvalidArgument (see ValidateService),
  // ResourceExhausted "Memory allocation problem" at max_services.
  Result<Change> AddService(const ServiceKey& key, const ServiceConfig& config);
  // ipvsadm -E: replaces the service's configuration; its destinations stay.
  // NotFound "No such service".
  Result<Change> EditService(const ServiceKey& key, const ServiceConfig& config);
  // ipvsadm -D: removes the service and its destinations. NotFound "No such service".
  Result<Change> DelService(const ServiceKey& key);

  // ipvsadm -a. NotFound "Service not defined", AlreadyExists "Destination already exists",
  // InvalidArgument (see ValidateDest), ResourceExhausted at max_dests_per_service.
  Result<Change> AddDest(const ServiceKey& key, const AddrPort& dest, const DestConfig& config);
  // ipvsadm -e: replaces the destination's configuration. NotFound "Service not defined" /
  // "No such destination".
  Result<Change> EditDest(const ServiceKey& key, const AddrPort& dest, const DestConfig& config);
  // ipvsadm -d. NotFound "Service not defined" / "No such destination".
  Result<Change> DelDest(const ServiceKey& key, const AddrPort& dest);

  // ipvsadm -C: removes everything.
  Change Clear();

  const VirtualService* Find(const ServiceKey& key) const;
  const std::map<ServiceKey, VirtualService>& services() const { return services_; }
  const TableLimits& limits() const { return limits_; }

  friend bool operator==(const VirtualServiceTable& a, const VirtualServiceTable& b) {
    return a.services_ == b.services_;
  }

 private:
  TableLimits limits_;
  std::map<ServiceKey, VirtualService> services_;
};

// The checks AddService/EditService make, usable before building a table change:
// scheduler known ("Scheduler or persistence engine not found"), port not 0, persistence
// timeout and netmask in range, one-packet only for UDP ("One-Packet Scheduling is only for UDP
// virtual services"), sorry server of the VIP's family with a port.
Status ValidateService(const ServiceKey& key, const ServiceConfig& config);
// The checks AddDest/EditDest make: an address of the service's family, not 0.0.0.0 or ::, with a
// port, weight 0..65535, thresholds 0..INT_MAX with lower <= upper ("Numerical result out of
// range", the kernel's ERANGE), dr only for UDP services, a valid agent id and check.
Status ValidateDest(const ServiceKey& key, const AddrPort& dest, const DestConfig& config);

}  // namespace vsc::vservice
