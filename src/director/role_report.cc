#include "director/role_report.h"

namespace vsc::director {

RoleReport Unreachable(const std::string& why) {
  return {kRoleUnknown, "unknown: cannot ask the director: " + why};
}

RoleReport ReportRole(int status, const std::optional<nlohmann::json>& body) {
  if (status == 409) {
    return {kRoleActive, "active: replication is off, no write to sequence (no lease needed)"};
  }
  if (status != 200 || !body || !body->is_object() || !body->contains("sequencer") ||
      !(*body)["sequencer"].is_object()) {
    return Unreachable("GET /v1/replication answered HTTP " + std::to_string(status) +
                       " without a sequencer section");
  }
  const nlohmann::json& s = (*body)["sequencer"];
  const bool required = s.value("lease_required", false);
  const bool sequencing = s.value("sequencing", false);
  const std::string epoch = std::to_string(body->value("epoch", uint64_t{0}));
  if (sequencing) {
    return {kRoleActive, required
                             ? "active: holds the sequencer lease, epoch " + epoch
                             : "active: sequences writes (no etcd lease required), epoch " + epoch};
  }
  // Promoting: it holds the lease and waits for the replicas to register, which they do with
  // the director at the VIP, so the VIP must follow it now.
  if (s.value("promoting", false)) {
    return {kRoleActive, "active: holds the sequencer lease, epoch " + epoch + "; " +
                             s.value("reason", "promoting")};
  }
  std::string reason = s.value("reason", "");
  if (reason.empty()) reason = "no reason given";
  return {kRoleNotActive, "standby: " + reason};
}

RoleReport ReportHealth(int status, const std::string& error) {
  if (status == 200) return {kRoleActive, "up: the director answers its admin API"};
  return Unreachable(error.empty() ? "GET /v1/status answered HTTP " + std::to_string(status)
                                   : error);
}

}  // namespace vsc::director
