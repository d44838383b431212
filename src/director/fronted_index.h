// Which registered agent fronts which local service (`vsc realserver --service
// NAME=tcp:HOST:PORT`, realserver/fronted_service.h): the index a static destination of the
// table is matched against, by protocol and address:port, so that it follows that agent's
// membership and carries its heartbeat load (service_view_builder.h).
//
// A server that is DOWN fronts nothing: its destinations are watched by their health checks
// alone, as any static server (an agent that died says nothing about the service behind it).
// Two live servers fronting one address: the first by id wins.
//
// Pure: built from a membership snapshot.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "membership/records.h"
#include "vservice/ip_address.h"
#include "vservice/service_key.h"

namespace vsc::director {

using FrontedKey = std::pair<vservice::Proto, vservice::AddrPort>;
using FrontedIndex = std::map<FrontedKey, std::string>;  // -> the fronting server's id

// `servers` as Membership::Snapshot() gives them (sorted by id). Endpoints without a protocol
// (vsc's own) and ones whose host is not a numeric address are left out.
FrontedIndex BuildFrontedIndex(const std::vector<membership::ServerRecord>& servers);

}  // namespace vsc::director
