#include "vservice/virtual_service_table.h"

#include <algorithm>
#include <cctype>

#include "sched/scheduler.h"

// Error texts: the first words are ipvsadm's own, so an operator's scripts and habits match.
// They come from ipvsadm 1.29+ (louygan/ipvsadm @0c7a7fc): libipvs/libipvs.c ipvs_strerror()
// for the kernel's answers ("Service already exists", "No such service", "Service not defined",
// "Destination already exists", "No such destination", "Scheduler or persistence engine not
// found", "Memory allocation problem") and ipvsadm.c fail() for its own checks ("One-Packet
// Scheduling is only for UDP virtual services", "Different address family is allowed only for
// tunneling servers", "illegal weight specified", ...). The kernel refuses l_threshold >
// u_threshold with ERANGE (net/netfilter/ipvs/ip_vs_ctl.c ip_vs_add_dest), which ipvsadm
// prints as strerror: "Numerical result out of range". After the ipvsadm text comes what was
// wrong and what to do.

namespace vsc::vservice {
namespace {

std::string In(const ServiceKey& key) { return " in " + ToString(key); }

std::string SchedulerList() {
  std::string out;
  for (std::string_view n : sched::SchedulerNames())
    out += (out.empty() ? "" : ", ") + std::string(n);
  return out;
}

Status CheckScheduler(const std::string& name) {
  const auto names = sched::SchedulerNames();
  if (std::find(names.begin(), names.end(), name) != names.end()) return Status::Ok();
  return InvalidArgument("Scheduler or persistence engine not found: '" + name +
                         "' is not a scheduler; use one of " + SchedulerList());
}

Status CheckPersistence(const ServiceKey& key, const Persistence& p) {
  if (p.timeout_s < 1 || p.timeout_s > kMaxPersistenceTimeout) {
    return InvalidArgument("invalid timeout value `" + std::to_string(p.timeout_s) +
                           "' specified; use -p 1..2678400 (seconds)");
  }
  if (key.vip.is_v4() && (p.prefix_len < 0 || p.prefix_len > 32)) {
    return InvalidArgument("illegal virtual server persistent mask specified: /" +
                           std::to_string(p.prefix_len) + "; use a netmask such as 255.255.255.0");
  }
  if (!key.vip.is_v4() && (p.prefix_len < 1 || p.prefix_len > 128)) {
    return InvalidArgument("illegal ipv6 netmask specified: " + std::to_string(p.prefix_len) +
                           "; use a prefix length 1..128");
  }
  return Status::Ok();
}

Status CheckSameFamily(const ServiceKey& key, const AddrPort& ap, std::string_view what) {
  if (ap.addr.family() == key.vip.family()) return Status::Ok();
  return InvalidArgument(
      "Different address family is allowed only for tunneling servers: " + std::string(what) + " " +
      ToString(ap) + In(key) + "; vsc has no tunnels, use an address of the VIP's family");
}

Status CheckAgentId(const std::string& id) {
  if (id.size() > 255) return InvalidArgument("agent id is longer than 255 characters");
  for (char c : id) {
    if (!std::isgraph(static_cast<unsigned char>(c))) {
      return InvalidArgument("agent id '" + id +
                             "' holds a space or control character; use the id the realserver "
                             "registers with");
    }
  }
  return Status::Ok();
}

}  // namespace

std::string_view MethodName(Method method) { return method == Method::kDr ? "dr" : "nat"; }

std::string_view ForwardName(Method method) { return method == Method::kDr ? "Route" : "Masq"; }

Status ValidateService(const ServiceKey& key, const ServiceConfig& config) {
  VSC_RETURN_IF_ERROR(CheckScheduler(config.scheduler));
  if (key.port == 0) {
    return InvalidArgument(
        "Zero port specified for " + ToString(key) +
        ": a user-space director listens on one port per service and cannot catch every "
        "port; give the service a port");
  }
  if (config.persistence) VSC_RETURN_IF_ERROR(CheckPersistence(key, *config.persistence));
  if (config.one_packet && key.proto != Proto::kUdp) {
    return InvalidArgument(
        "One-Packet Scheduling is only for UDP virtual services; remove -o "
        "from " +
        ToString(key));
  }
  if (config.sorry_server) {
    VSC_RETURN_IF_ERROR(CheckSameFamily(key, *config.sorry_server, "sorry server"));
    if (config.sorry_server->port == 0 || config.sorry_server->addr.is_unspecified()) {
      return InvalidArgument("sorry server " + ToString(*config.sorry_server) + In(key) +
                             " needs a specific address (not 0.0.0.0 or ::) and a port");
    }
  }
  return Status::Ok();
}

Status ValidateDest(const ServiceKey& key, const AddrPort& dest, const DestConfig& config) {
  VSC_RETURN_IF_ERROR(CheckSameFamily(key, dest, "destination"));
  if (dest.port == 0 || dest.addr.is_unspecified()) {
    return InvalidArgument(
        "destination " + ToString(dest) + In(key) +
        " needs a specific address (not 0.0.0.0 or ::) and a port; write e.g. -r 10.0.0.2:80");
  }
  if (config.method == Method::kDr && key.proto == Proto::kTcp) {
    return InvalidArgument("direct return (-g) is not possible for TCP in a user-space director: " +
                           ToString(dest) + In(key) + "; use -m (nat)");
  }
  if (config.weight > kMaxWeight) {
    return InvalidArgument("illegal weight specified: " + std::to_string(config.weight) +
                           "; use 0..65535");
  }
  if (config.u_threshold > kMaxThreshold) {
    return InvalidArgument("illegal u_threshold specified; use 0..2147483647");
  }
  if (config.l_threshold > kMaxThreshold) {
    return InvalidArgument("illegal l_threshold specified; use 0..2147483647");
  }
  if (config.l_threshold > config.u_threshold) {
    return InvalidArgument("Numerical result out of range: lower threshold (-y " +
                           std::to_string(config.l_threshold) + ") is above upper threshold (-x " +
                           std::to_string(config.u_threshold) + "); set -x above -y");
  }
  VSC_RETURN_IF_ERROR(CheckAgentId(config.agent_id));
  if (config.check) VSC_RETURN_IF_ERROR(Validate(*config.check));
  return Status::Ok();
}

Result<Change> VirtualServiceTable::AddService(const ServiceKey& key, const ServiceConfig& config) {
  if (services_.contains(key)) {
    return AlreadyExists("Service already exists: " + ToString(key) +
                         "; change it with -E or delete it with -D first");
  }
  VSC_RETURN_IF_ERROR(ValidateService(key, config));
  if (services_.size() >= limits_.max_services) {
    return ResourceExhausted("Memory allocation problem: the table holds its limit of " +
                             std::to_string(limits_.max_services) + " services; delete one first");
  }
  services_.emplace(key, VirtualService{key, config, {}});
  return Change{ChangeKind::kAddService, {key}, std::nullopt, 0, true};
}

Result<Change> VirtualServiceTable::EditService(const ServiceKey& key,
                                                const ServiceConfig& config) {
  auto it = services_.find(key);
  if (it == services_.end()) {
    return NotFound("No such service: " + ToString(key) + "; add it with -A");
  }
  VSC_RETURN_IF_ERROR(ValidateService(key, config));
  const bool modified = !(it->second.config == config);
  it->second.config = config;
  return Change{ChangeKind::kEditService, {key}, std::nullopt, 0, modified};
}

Result<Change> VirtualServiceTable::DelService(const ServiceKey& key) {
  auto it = services_.find(key);
  if (it == services_.end()) {
    return NotFound("No such service: " + ToString(key) + "; list the services with -L -n");
  }
  const size_t dests = it->second.dests.size();
  services_.erase(it);
  return Change{ChangeKind::kDelService, {key}, std::nullopt, dests, true};
}

namespace {

std::string NotDefined(const ServiceKey& key) {
  return "Service not defined: " + ToString(key) + "; add the service with -A first";
}

std::string NoSuchDest(const ServiceKey& key, const AddrPort& dest) {
  return "No such destination: " + ToString(dest) + In(key) + "; list them with -L -n";
}

}  // namespace

Result<Change> VirtualServiceTable::AddDest(const ServiceKey& key, const AddrPort& dest,
                                            const DestConfig& config) {
  auto it = services_.find(key);
  if (it == services_.end()) return NotFound(NotDefined(key));
  if (it->second.dests.contains(dest)) {
    return AlreadyExists("Destination already exists: " + ToString(dest) + In(key) +
                         "; change it with -e or delete it with -d first");
  }
  VSC_RETURN_IF_ERROR(ValidateDest(key, dest, config));
  if (it->second.dests.size() >= limits_.max_dests_per_service) {
    return ResourceExhausted(
        "Memory allocation problem: " + ToString(key) + " holds its limit of " +
        std::to_string(limits_.max_dests_per_service) + " destinations; delete one first");
  }
  it->second.dests.emplace(dest, config);
  return Change{ChangeKind::kAddDest, {key}, dest, 0, true};
}

Result<Change> VirtualServiceTable::EditDest(const ServiceKey& key, const AddrPort& dest,
                                             const DestConfig& config) {
  auto it = services_.find(key);
  if (it == services_.end()) return NotFound(NotDefined(key));
  auto d = it->second.dests.find(dest);
  if (d == it->second.dests.end()) return NotFound(NoSuchDest(key, dest));
  VSC_RETURN_IF_ERROR(ValidateDest(key, dest, config));
  const bool modified = !(d->second == config);
  d->second = config;
  return Change{ChangeKind::kEditDest, {key}, dest, 0, modified};
}

Result<Change> VirtualServiceTable::DelDest(const ServiceKey& key, const AddrPort& dest) {
  auto it = services_.find(key);
  if (it == services_.end()) return NotFound(NotDefined(key));
  if (it->second.dests.erase(dest) == 0) return NotFound(NoSuchDest(key, dest));
  return Change{ChangeKind::kDelDest, {key}, dest, 0, true};
}

Change VirtualServiceTable::Clear() {
  Change change{ChangeKind::kClear, {}, std::nullopt, 0, !services_.empty()};
  for (const auto& [key, service] : services_) {
    change.services.push_back(key);
    change.dests_removed += service.dests.size();
  }
  services_.clear();
  return change;
}

const VirtualService* VirtualServiceTable::Find(const ServiceKey& key) const {
  auto it = services_.find(key);
  return it == services_.end() ? nullptr : &it->second;
}

}  // namespace vsc::vservice
