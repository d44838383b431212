// The Replicator's idempotency keys (issue 11, replicator_keys.cc).
#include <gtest/gtest.h>

#include "unit/director/replicator_fixture.h"

namespace vsc::director {
namespace {

using testing::ReplicatorFixture;

class ReplicatorIdempotencyTest : public ReplicatorFixture {
 protected:
  void OpenWithReplica() {
    Open();
    rs1_ = MakeReplica("rs1");
    Join(rs1_);
  }
  WriteSlot Keyed(const std::string& sql, const std::string& key) {
    proto::WriteRequest req;
    req.set_request_id(++request_id_);
    req.set_idempotency_key(key);
    req.add_statements()->set_sql(sql);
    auto slot = std::make_shared<std::optional<proto::WriteResponse>>();
    rep_->Submit(req, [slot](const proto::WriteResponse& r) { *slot = r; });
    return slot;
  }

  testing::FakeReplica rs1_;
};

TEST_F(ReplicatorIdempotencyTest, TheKeyTravelsWithTheEntryAndADuplicateSaysSo) {
  OpenWithReplica();
  auto first = Keyed("INSERT INTO t(v) VALUES ('x')", "k-1");
  Poll();
  Deliver(rs1_);
  ASSERT_TRUE(first->has_value());
  EXPECT_TRUE((*first)->ok());
  EXPECT_FALSE((*first)->duplicate());
  auto logged = replication::ReplicationLog::OpenReader(options_.log_file);
  ASSERT_TRUE(logged.ok());
  auto entries = (*logged)->Read(1, 1, 1 << 20);
  ASSERT_TRUE(entries.ok());
  EXPECT_EQ(entries->front().idempotency_key, "k-1");
  EXPECT_EQ(entries->front().idempotency_window, replication::kDefaultIdempotencyWindow);
  // The retry after the answer is sequenced again; the replica says it was applied at seq 1.
  auto retry = Keyed("INSERT INTO t(v) VALUES ('x')", "k-1");
  Poll();
  Deliver(rs1_);
  ASSERT_TRUE(retry->has_value());
  EXPECT_TRUE((*retry)->ok());
  EXPECT_TRUE((*retry)->duplicate());
  EXPECT_EQ((*retry)->seq(), 1u);
  EXPECT_EQ((*retry)->request_id(), request_id_);
  EXPECT_EQ(rep_->last_seq(), 2u);
}

TEST_F(ReplicatorIdempotencyTest, ARetryWhileTheOriginalWaitsJoinsItsAnswer) {
  OpenWithReplica();
  auto first = Keyed("INSERT INTO t(v) VALUES ('x')", "k-2");
  Poll();
  auto retry = Keyed("INSERT INTO t(v) VALUES ('x')", "k-2");
  Poll();
  EXPECT_EQ(rep_->last_seq(), 1u) << "the retry must not be sequenced";
  EXPECT_FALSE(retry->has_value());
  Deliver(rs1_);
  ASSERT_TRUE(first->has_value() && retry->has_value());
  EXPECT_TRUE((*retry)->ok());
  EXPECT_EQ((*retry)->seq(), 1u);
  EXPECT_EQ((*retry)->request_id(), (*first)->request_id() + 1);
  EXPECT_EQ(rep_->GetStatus().update_queue, 0u);
}

TEST_F(ReplicatorIdempotencyTest, BadKeysAndKeyedDdlAreRefusedBeforeSequencing) {
  OpenWithReplica();
  auto too_long = Keyed("INSERT INTO t(v) VALUES ('x')", std::string(129, 'k'));
  auto control = Keyed("INSERT INTO t(v) VALUES ('x')", "a\tb");
  auto ddl = Keyed("CREATE TABLE u(x)", "k-ddl");
  Poll();
  for (auto* w : {&too_long, &control, &ddl}) {
    ASSERT_TRUE((*w)->has_value());
    EXPECT_FALSE((**w)->ok());
    EXPECT_EQ((**w)->code(), kWriteRefused);
  }
  EXPECT_NE((*too_long)->error().find("idempotency key refused"), std::string::npos);
  EXPECT_NE((*ddl)->error().find("cannot be used with DDL"), std::string::npos);
  EXPECT_EQ(rep_->last_seq(), 0u);
}

TEST_F(ReplicatorIdempotencyTest, AnUnknownOutcomeSaysToRetryWithTheKey) {
  OpenWithReplica();
  auto keyed = Keyed("INSERT INTO t(v) VALUES ('x')", "k-3");
  auto plain = Write("INSERT INTO t(v) VALUES ('y')");
  Poll();
  rep_->Stop();
  ASSERT_TRUE(keyed->has_value() && plain->has_value());
  EXPECT_EQ((*keyed)->code(), kWriteUnknown);
  EXPECT_NE((*keyed)->error().find("retry with the same idempotency key"), std::string::npos);
  EXPECT_EQ((*plain)->error().find("idempotency"), std::string::npos);
}

}  // namespace
}  // namespace vsc::director
