// The virtual-service table as TOML, in keepalived's vocabulary (docs/operations.md "Virtual
// services in TOML"): the director's configuration file declares services this way, and the
// director saves its running table in the same form so that it survives a restart. Unlike the
// ipvsadm save format it carries everything: sorry servers, agent ids and health checks.
//
//   [[service]]
//   protocol = "tcp"                    # TCP | UDP (keepalived: protocol)
//   address = "10.0.0.1:80"             # VIP:PORT, "[2001:db8::1]:80" for IPv6
//   lb_algo = "wlc"                     # the scheduler (alias: scheduler)
//   persistence_timeout = 360           # seconds, or "6m"; absent = not persistent
//   persistence_granularity = "255.255.255.0"   # IPv4 netmask, IPv6 prefix length
//   ops = false                         # one-packet scheduling (UDP)
//   sorry_server = "10.0.0.9:80"
//   lb_kind = "NAT"                     # the servers' default method: NAT | DR
//   [service.check]                     # the servers' default health check
//   type = "TCP_CHECK"                  # TCP_CHECK | HTTP_GET | UDP_CHECK | MISC_CHECK
//   delay_loop = "6s"
//   [[service.server]]
//   address = "192.168.1.11:80"         # keepalived: real_server IP PORT
//   weight = 1
//   lb_kind = "DR"                      # overrides the service's
//   uthreshold = 0                      # ipvsadm -x / -y
//   lthreshold = 0
//   agent = "rs1"                       # vsc: the id of the vsc realserver behind it
//   [service.server.check]              # overrides fields of [service.check]
//   path = "/healthz"
//
// A server's check is the service's check with the server's own fields laid over it ("a
// virtual server setting is the default for its real servers", keepalived.conf(5)); a server
// with neither has none. Durations are seconds (an integer or a fraction) or a string with a
// unit ("500ms", "2s", "1m"). Unknown keys are errors, so a typo cannot pass silently.
//
// Pure: text in, table out (all or nothing); errors name the origin, the service and the key.
#pragma once

#include <string>
#include <string_view>
#include <toml++/toml.h>
#include <utility>

#include "common/status.h"
#include "vservice/virtual_service_table.h"

namespace vsc::vservice {

// Builds a table from every `[[service]]` of `text`; other top-level keys and tables (the
// daemon's own `[director]` section) are left alone. InvalidArgument "ORIGIN: service N (...):
// ..." on the first error.
Result<VirtualServiceTable> LoadServicesToml(std::string_view text, std::string_view origin,
                                             TableLimits limits = {});

// The table as TOML that LoadServicesToml reads back to an equal table. Checks are written in
// full (every field of their type), so a change of keepalived's defaults cannot alter a saved
// table.
std::string SaveServicesToml(const VirtualServiceTable& table);

// The same vocabulary one table at a time, for the JSON form of the admin API (service_json.h),
// which converts JSON to these TOML tables so that both forms share one reader and one writer.
Result<VirtualServiceTable> LoadServicesTable(const toml::table& root, std::string_view origin,
                                              TableLimits limits = {});
// One [[service]] table, added (with its servers) to `table`; errors as LoadServicesToml's.
Status AddServiceFromToml(const toml::table& service, std::string_view where,
                          VirtualServiceTable& table);
// One [[service.server]] table on its own (no service defaults: lb_kind NAT, no check).
Result<std::pair<AddrPort, DestConfig>> ServerFromToml(const toml::table& server,
                                                       std::string_view where);
toml::table ServiceToml(const VirtualService& service);
toml::table ServerToml(const AddrPort& address, const DestConfig& config);

}  // namespace vsc::vservice
