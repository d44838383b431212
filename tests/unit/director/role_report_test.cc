#include "director/role_report.h"

#include <gtest/gtest.h>

namespace vsc::director {
namespace {

using nlohmann::json;

json Replication(bool required, bool sequencing, const std::string& reason) {
  return json{{"epoch", 4294967302ull},
              {"sequencer",
               {{"lease_required", required}, {"sequencing", sequencing}, {"reason", reason}}}};
}

TEST(RoleReportTest, TheLeaseHolderIsActive) {
  RoleReport r = ReportRole(200, Replication(true, true, ""));
  EXPECT_EQ(r.exit_code, kRoleActive);
  EXPECT_EQ(r.line, "active: holds the sequencer lease, epoch 4294967302");
}

TEST(RoleReportTest, APromotingLeaseHolderIsActiveSoTheVipAndItsServersReachIt) {
  json j = Replication(true, false, "promoting: learning where every replica stands");
  j["sequencer"]["promoting"] = true;
  RoleReport r = ReportRole(200, j);
  EXPECT_EQ(r.exit_code, kRoleActive);
  EXPECT_EQ(r.line,
            "active: holds the sequencer lease, epoch 4294967302; promoting: learning where every "
            "replica stands");
}

TEST(RoleReportTest, ADirectorWithoutTheLeaseIsStandbyAndSaysWhy) {
  for (const std::string reason :
       {"another director holds the sequencer lease (director with write port 10.0.0.9:7300, "
        "admin 127.0.0.1:7200, pid 42)",
        "no quorum for the sequencer lease (etcd: connection refused)",
        "the sequencer lease is not held yet; claiming it"}) {
    RoleReport r = ReportRole(200, Replication(true, false, reason));
    EXPECT_EQ(r.exit_code, kRoleNotActive) << reason;
    EXPECT_EQ(r.line, "standby: " + reason);
  }
  EXPECT_EQ(ReportRole(200, Replication(true, false, "")).line, "standby: no reason given");
}

TEST(RoleReportTest, WithoutEtcdOrReplicationNothingNeedsTheLease) {
  RoleReport local = ReportRole(200, Replication(false, true, ""));
  EXPECT_EQ(local.exit_code, kRoleActive);
  EXPECT_EQ(local.line, "active: sequences writes (no etcd lease required), epoch 4294967302");
  // A director fenced by a replica without etcd still does not sequence.
  EXPECT_EQ(ReportRole(200, Replication(false, false, "a replica follows epoch 9")).exit_code,
            kRoleNotActive);
  RoleReport off = ReportRole(409, json{{"error", "replication is off"}});
  EXPECT_EQ(off.exit_code, kRoleActive);
  EXPECT_NE(off.line.find("replication is off"), std::string::npos) << off.line;
}

TEST(RoleReportTest, AnAnswerThatCannotBeReadIsUnknown) {
  EXPECT_EQ(ReportRole(200, std::nullopt).exit_code, kRoleUnknown);
  EXPECT_EQ(ReportRole(200, json{{"epoch", 1}}).exit_code, kRoleUnknown);
  EXPECT_EQ(ReportRole(200, json{{"sequencer", "yes"}}).exit_code, kRoleUnknown);
  RoleReport denied = ReportRole(401, json{{"error", "missing or wrong bearer token"}});
  EXPECT_EQ(denied.exit_code, kRoleUnknown);
  EXPECT_NE(denied.line.find("HTTP 401"), std::string::npos) << denied.line;
  RoleReport gone = Unreachable("connection refused");
  EXPECT_EQ(gone.exit_code, kRoleUnknown);
  EXPECT_EQ(gone.line, "unknown: cannot ask the director: connection refused");
}

TEST(RoleReportTest, HealthIsTheAdminApiAnswering) {
  EXPECT_EQ(ReportHealth(200, "").exit_code, kRoleActive);
  RoleReport denied = ReportHealth(401, "missing or wrong bearer token");
  EXPECT_EQ(denied.exit_code, kRoleUnknown);
  EXPECT_EQ(denied.line, "unknown: cannot ask the director: missing or wrong bearer token");
  EXPECT_EQ(ReportHealth(503, "").line,
            "unknown: cannot ask the director: GET /v1/status "
            "answered HTTP 503");
}

}  // namespace
}  // namespace vsc::director
