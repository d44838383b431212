// The virtual-service table as JSON, for the admin API (/v1/services): the same keepalived
// vocabulary as the TOML form (service_toml.h), one object per [[service]] and per
// [[service.server]]:
//
//   {"protocol": "tcp", "address": "10.0.0.1:80", "lb_algo": "wlc",
//    "persistence_timeout": 360, "persistence_granularity": "255.255.255.0",
//    "server": [{"address": "192.168.1.11:80", "lb_kind": "NAT", "weight": 1,
//                "check": {"type": "TCP_CHECK", "delay_loop": "6s"}}]}
//
// The decoders convert JSON to TOML tables and use the TOML readers, so both forms accept
// exactly the same keys, defaults and errors; the encoders write every field, so that
// decoding an encoded value gives it back. JSON null, and integers outside int64, have no TOML
// form and are refused. Pure.
#pragma once

#include <nlohmann/json.hpp>
#include <string_view>
#include <utility>

#include "common/status.h"
#include "vservice/virtual_service_table.h"

namespace vsc::vservice {

nlohmann::json ServiceToJson(const VirtualService& service);
nlohmann::json ServerToJson(const AddrPort& address, const DestConfig& config);
// {"service": [ServiceToJson...]} in table order.
nlohmann::json TableToJson(const VirtualServiceTable& table);

// One service object with its servers. InvalidArgument naming the key that is wrong, or the
// table's own error (an unknown scheduler, a duplicate server: ipvsadm's text).
Result<VirtualService> ServiceFromJson(const nlohmann::json& service, TableLimits limits = {});
// One server object (its "address" is required).
Result<std::pair<AddrPort, DestConfig>> ServerFromJson(const nlohmann::json& server);
Result<VirtualServiceTable> TableFromJson(const nlohmann::json& table, TableLimits limits = {});

}  // namespace vsc::vservice
