// The in-sync record in etcd (issue 11, director/in_sync_record.h), with real processes: etcd,
// directors A and B, two real servers given both directors. rs2 goes down, so A's writes are
// acknowledged by rs1 alone (and A records {rs1} before it answers); then A and rs1 die and rs2
// comes back first. Without the record B would promote from rs2 and lose the writes only rs1
// holds; with it B waits, naming rs1, until rs1 returns, and the log resumes after A's last
// acknowledged write.
#include <signal.h>

#include "integration/director_standby_fixture.h"

namespace vsc::integration {
namespace {

using nlohmann::json;

class DirectorInSyncTest : public DirectorStandbyFixture {
 protected:
  // The in-sync record's members as a director reports them.
  static std::vector<std::string> Recorded(uint16_t admin_port, const std::string& token) {
    auto j = Replication(admin_port, token);
    if (!j) return {};
    return (*j)["sequencer"]["in_sync_record"].value("members", std::vector<std::string>{});
  }
  // The record as etcd holds it.
  std::string InEtcd() {
    std::vector<director::EtcdEndpoint> eps;
    for (const std::string& url : etcd_->ClientUrls()) {
      auto ep = director::ParseEtcdEndpoint(url);
      if (ep.ok()) eps.push_back(*ep);
    }
    director::EtcdClient client(eps, 2s);
    auto kv = client.Get("/vscluster/standby-test/in_sync");
    return kv.ok() && kv->has_value() ? (*kv)->value : "";
  }
};

TEST_F(DirectorInSyncTest, APromotionWaitsForAReplicaThatHoldsEveryAcknowledgedWrite) {
  const uint16_t b_control = test_support::FreePort("127.0.0.1");
  ASSERT_NO_FATAL_FAILURE(StartAWithServersListing(b_control));
  const uint16_t a_admin = cluster_->admin_port();
  const std::string a_token = cluster_->admin_token();
  ASSERT_NO_FATAL_FAILURE(StartB(b_control));
  const auto before = Size7(cluster_->sql_port(), 0);
  ASSERT_TRUE(before.has_value());
  WriteThroughA(3);
  ASSERT_FALSE(HasFailure());
  EXPECT_EQ(Recorded(a_admin, a_token), (std::vector<std::string>{"rs1", "rs2"}));
  EXPECT_TRUE(Contains(InEtcd(), R"("in_sync":["rs1","rs2"])")) << InEtcd();

  // rs2 goes: the next writes are acknowledged by rs1 alone, once etcd names rs1 alone.
  ASSERT_TRUE(cluster_->SignalServer(1, SIGKILL).ok());
  ASSERT_TRUE(cluster_->WaitServerExit(1, 5s).has_value());
  constexpr int kAlone = 5;
  const uint64_t last_seq = WriteThroughA(kAlone);
  ASSERT_FALSE(HasFailure());
  EXPECT_TRUE(Contains(InEtcd(), R"("in_sync":["rs1"])")) << InEtcd();

  // A and rs1 die; rs2, which lacks the last writes, comes back first and registers with B.
  ASSERT_TRUE(cluster_->SignalDirector(SIGKILL).ok());
  ASSERT_TRUE(cluster_->SignalServer(0, SIGKILL).ok());
  ASSERT_TRUE(cluster_->WaitServerExit(0, 5s).has_value());
  ASSERT_TRUE(cluster_->RestartServer(1).ok());
  std::string promotion;
  ASSERT_TRUE(WaitUntil(
      [&] {
        auto j = Replication(b_.admin_port, b_.token);
        promotion = j ? (*j)["sequencer"].value("promotion", "") : "";
        return Contains(promotion, "waiting for a replica of the last in-sync set (rs1)");
      },
      15s, 20ms))
      << "B never waited for rs1: " << promotion;
  // Well past B's promotion window (1 s), it still waits: for 1.5 s its status says so at every
  // look, and then so does the refusal its writers read.
  const bool went_on = WaitUntil(
      [&] {
        auto j = Replication(b_.admin_port, b_.token);
        return !j || !(*j)["sequencer"].value("promoting", false);
      },
      1500ms, 50ms);
  EXPECT_FALSE(went_on) << "B promoted without a replica of the last in-sync set";
  proto::WriteResponse refused = Write(b_.write_port);
  EXPECT_FALSE(refused.ok());
  EXPECT_TRUE(Contains(refused.error(), "waiting for a replica of the last in-sync set (rs1)"))
      << refused.error();
  EXPECT_TRUE(Contains(refused.error(), "delete /vscluster/standby-test/in_sync"))
      << refused.error();

  ASSERT_TRUE(cluster_->RestartServer(0).ok());
  const std::optional<proto::WriteResponse> next = FirstWriteOnB();
  ASSERT_TRUE(next.has_value());
  EXPECT_EQ(next->seq(), last_seq + 1) << "the log resumes after A's last acknowledged write";
  ASSERT_TRUE(WaitUntil(
      [&] {
        auto j = Replication(b_.admin_port, b_.token);
        if (!j || (*j)["replicas"].size() != 2) return false;
        for (const auto& r : (*j)["replicas"]) {
          if (r.value("replication", "") != "IN_SYNC") return false;
        }
        return true;
      },
      20s, 50ms))
      << "rs2 never caught up with rs1";
  EXPECT_EQ(Size7(b_.sql_port, next->seq()), *before + 3 + kAlone + 1);
  EXPECT_TRUE(WaitUntil([&] { return Contains(InEtcd(), R"("in_sync":["rs1","rs2"])"); }, 5s, 50ms))
      << InEtcd();
}

}  // namespace
}  // namespace vsc::integration
