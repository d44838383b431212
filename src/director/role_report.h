// RoleReport: what `vsc adm role` and `vsc adm health` say about a director, and their exit
// codes, which keepalived's track scripts read (issue 11, docs/keepalived/). Pure: the admin
// API's answer in, a line and an exit code out.
//
// - role: 0 (kRoleActive) when this director sequences writes: it holds the etcd sequencer
//   lease, or it needs none (no etcd_endpoints, or replication off: nothing to sequence);
//   1 (kRoleNotActive) when it answers but does not sequence (another director holds the lease,
//   etcd has no quorum or cannot be reached, the lease is being claimed, a replica follows a
//   newer epoch), the line naming why; 2 (kRoleUnknown) when the director cannot be asked.
// - health: 0 when the director answers its admin API, 2 when it does not.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace vsc::director {

inline constexpr int kRoleActive = 0;
inline constexpr int kRoleNotActive = 1;
inline constexpr int kRoleUnknown = 2;

struct RoleReport {
  int exit_code = kRoleUnknown;
  std::string line;  // one line for the operator (and keepalived's log)
};

// From GET /v1/replication: `status` its HTTP status, `body` its parsed JSON (nullopt when the
// body was not JSON). 409 is a director without replication.
RoleReport ReportRole(int status, const std::optional<nlohmann::json>& body);

// A failure to reach the director at all (`why`: the transport's error).
RoleReport Unreachable(const std::string& why);

// From GET /v1/status: the director answers (200) or not.
RoleReport ReportHealth(int status, const std::string& error);

}  // namespace vsc::director
