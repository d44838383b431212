#include "director/catch_up.h"

#include "replication/digest.h"

namespace vsc::director {

CatchUpPlan DecideCatchUp(const ReplicaPosition& replica, const LogPosition& log,
                          const std::optional<replication::Digest>& agreed) {
  CatchUpPlan plan;
  auto snapshot = [&](std::string reason) {
    plan.action = CatchUpPlan::Action::kSnapshot;
    plan.reason = std::move(reason);
    return plan;
  };
  const uint64_t seq = replica.applied_seq;
  if (seq == 0 && replica.content_checksum != log.bootstrap_checksum) {
    return snapshot("database content differs from the bootstrap database (checksum '" +
                    replica.content_checksum + "', expected '" + log.bootstrap_checksum + "')");
  }
  if (seq > log.last_seq) {
    return snapshot("applied seq " + std::to_string(seq) + " is beyond the log's last seq " +
                    std::to_string(log.last_seq) + " (a history this director does not hold)");
  }
  if (agreed.has_value() && (!replica.digest.has_value() || *replica.digest != *agreed)) {
    return snapshot("digest at seq " + std::to_string(seq) + " is " +
                    (replica.digest ? replication::DigestHex(*replica.digest) : "missing") +
                    ", the replicas agreed on " + replication::DigestHex(*agreed));
  }
  if (seq + 1 < log.first_seq) {
    return snapshot("the log no longer holds seq " + std::to_string(seq + 1) + " (it starts at " +
                    std::to_string(log.first_seq) + ")");
  }
  plan.action = CatchUpPlan::Action::kStream;
  plan.from_seq = seq + 1;
  plan.needs_catch_up = seq < log.last_seq;
  return plan;
}

}  // namespace vsc::director
