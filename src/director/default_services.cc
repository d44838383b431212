#include "director/default_services.h"

namespace vsc::director {
namespace {

vservice::ServiceConfig LookupConfig(const DirectorConfig& c) {
  vservice::ServiceConfig sc;
  sc.scheduler = c.scheduler;
  if (c.persistence_timeout_s > 0) {
    auto prefix = LookupPersistencePrefix(c);  // ValidateConfig checked it
    sc.persistence = vservice::Persistence{c.persistence_timeout_s, prefix.ok() ? *prefix : 32};
  }
  return sc;
}

}  // namespace

Result<int> LookupPersistencePrefix(const DirectorConfig& config) {
  const auto vip = vservice::IpAddress::Parse(config.listen);
  const auto family = vip.ok() ? vip->family() : vservice::Family::kV4;  // listen checked apart
  if (family == vservice::Family::kV6 && config.persistence_netmask == "255.255.255.255") {
    return 128;
  }
  auto prefix = vservice::ParseNetmask(config.persistence_netmask, family);
  if (!prefix.ok()) return prefix.status().Annotate("persistence_netmask");
  return prefix;
}

std::set<vservice::ServiceKey> BuiltinServiceKeys(const DirectorConfig& config,
                                                  uint16_t lookup_port) {
  const auto vip = vservice::IpAddress::Parse(config.listen);
  if (!vip.ok()) return {};  // ValidateConfig refused it before anything binds
  return {{vservice::Proto::kTcp, *vip, lookup_port}, {vservice::Proto::kUdp, *vip, lookup_port}};
}

Result<vservice::VirtualServiceTable> InitialServiceTable(const DirectorConfig& config,
                                                          uint16_t lookup_port) {
  vservice::VirtualServiceTable table = config.services.value_or(vservice::VirtualServiceTable{});
  for (const vservice::ServiceKey& key : BuiltinServiceKeys(config, lookup_port)) {
    if (table.Find(key) != nullptr) {
      return InvalidArgument(vservice::ToString(key) +
                             " is the built-in lookup service; configure it with the [director] "
                             "keys listen, lookup_port, scheduler and persistence_*, or give the "
                             "service another port");
    }
    VSC_RETURN_IF_ERROR(table.AddService(key, LookupConfig(config)).status());
  }
  return table;
}

}  // namespace vsc::director
