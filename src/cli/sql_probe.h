// Why `vsc sql` cannot reach a director's write port: when the connection is refused, the
// director may be running with replication off (it then opens no write port). Its HTTP API
// (http_port, always open) says so: GET /db/query answers 503 "replication is not enabled on
// this director; ...". ReplicationOffMessage asks it, bounded by `timeout`.
// Thread: any (blocking).
#pragma once

#include <optional>
#include <string>

#include "common/clock.h"

namespace vsc::cli {

// The director's own message when its HTTP API at host:http_port says replication is off;
// nullopt when it does not answer so (not running, other port, authentication required).
std::optional<std::string> ReplicationOffMessage(const std::string& host, uint16_t http_port,
                                                 Duration timeout);

}  // namespace vsc::cli
