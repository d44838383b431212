// The director's default virtual services (issue 12): the lookup service of seed 000 as two
// ordinary entries of the table, `-u VIP:lookup_port` (dr) and `-t VIP:lookup_port` (nat),
// with the configured scheduler and persistence. Their destinations are the registered agents
// that declare the lookup endpoints (membership, not the table), served by the lookup runtime.
// Pure.
#pragma once

#include <set>

#include "common/status.h"
#include "director/director_config.h"
#include "vservice/virtual_service_table.h"

namespace vsc::director {

// The built-in entries' persistence granularity (ipvsadm -M) as a prefix length of listen's
// family: persistence_netmask is a dotted mask for an IPv4 listen address and a prefix length
// (1..128) for an IPv6 one, whose default (the key's IPv4 default, 255.255.255.255) is 128.
Result<int> LookupPersistencePrefix(const DirectorConfig& config);

std::set<vservice::ServiceKey> BuiltinServiceKeys(const DirectorConfig& config,
                                                  uint16_t lookup_port);

// config.services (if any) plus the built-in entries. InvalidArgument when config.services
// declares a built-in key itself (the lookup service is configured by the [director] keys).
Result<vservice::VirtualServiceTable> InitialServiceTable(const DirectorConfig& config,
                                                          uint16_t lookup_port);

}  // namespace vsc::director
