// The Replicator's promotion (issue 11): a director that takes the sequencer lease waits
// promotion_wait for the replicas to register, resumes the log at the highest position they
// report (rebasing its own log when that log does not hold it), streams on from there to the
// replicas at the head and has the others copy a snapshot from one of them; a log that holds the
// head is kept, and what it holds beyond reaches every replica.
#include <gtest/gtest.h>

#include "director/replicator.h"
#include "director/sequencer_lease.h"
#include "replication/log.h"
#include "replication/mirror.h"
#include "unit/director/replicator_fixture.h"

namespace vsc::director {
namespace {

using namespace std::chrono_literals;
using testing::FakeReplica;

class ReplicatorPromotionTest : public testing::ReplicatorFixture {
 protected:
  void SetUp() override {
    ReplicatorFixture::SetUp();
    options_.require_lease = true;
    options_.promotion_wait = 1s;
    auto ddl = replication::SchemaMirror::ReadSchema(Path("boot.db"));
    ASSERT_TRUE(ddl.ok()) << ddl.status().ToString();
    schema_ = *ddl;
  }
  LeaseView Held(uint64_t epoch) { return LeaseView{true, epoch, clock_.Now() + 60s, "", ""}; }
  // A replica that applied `applied` entries of another director's history, ending at `digest`.
  FakeReplica At(const std::string& id, uint64_t applied, uint8_t digest_byte) {
    FakeReplica r = MakeReplica(id);
    r.applied = applied;
    r.digest.fill(digest_byte);
    r.schema = schema_;
    return r;
  }
  std::string Error(const WriteSlot& w) {
    EXPECT_TRUE(w->has_value());
    return w->has_value() ? (*w)->error() : "";
  }
  static constexpr uint64_t kEpoch = kEtcdEpochBase + 77;
  std::vector<std::string> schema_;
};

TEST_F(ReplicatorPromotionTest, ANewDirectorResumesAtTheHighestReplicaAndRebuildsTheOthers) {
  Open();
  rep_->SetLease(Held(kEpoch));
  FakeReplica a = At("rs1", 7, 0x77);
  FakeReplica b = At("rs2", 5, 0x55);
  Join(a);
  Join(b);
  EXPECT_EQ(Info("rs1")->state, ReplicationState::kAwaitingHead);
  auto early = Write("UPDATE t SET v = 'x' WHERE id = 1");
  Poll();
  EXPECT_NE(Error(early).find("promoting: learning where every replica stands"), std::string::npos)
      << Error(early);
  EXPECT_TRUE(rep_->GetStatus().promoting);
  clock_.Advance(999ms);
  FakeReplica c = At("rs3", 7, 0x77);
  Join(c);
  EXPECT_TRUE(rep_->GetStatus().promoting) << "the window has not passed";
  EXPECT_EQ(a.EntriesQueued() + b.EntriesQueued() + c.EntriesQueued(), 0u);

  clock_.Advance(1ms);
  auto w = Write("UPDATE t SET v = 'y' WHERE id = 1");
  Poll();
  const ReplicationStatus st = rep_->GetStatus();
  EXPECT_FALSE(st.promoting);
  EXPECT_NE(st.promotion.find("the log restarts after the replicas' head seq 7"), std::string::npos)
      << st.promotion;
  EXPECT_EQ(rep_->last_seq(), 8u) << "the write follows the head";
  EXPECT_EQ(Info("rs1")->state, ReplicationState::kInSync);
  EXPECT_EQ(Info("rs3")->state, ReplicationState::kInSync);
  EXPECT_EQ(Info("rs2")->state, ReplicationState::kNeedsSnapshot);
  auto order = b.SnapshotOrder();
  ASSERT_TRUE(order.has_value()) << "rs2 lacks seq 6..7, which no log holds";
  EXPECT_TRUE(order->peer_id() == "rs1" || order->peer_id() == "rs3") << order->peer_id();
  EXPECT_EQ(order->epoch(), kEpoch);
  Deliver(a);
  Deliver(c);
  ASSERT_TRUE(w->has_value());
  EXPECT_TRUE((*w)->ok()) << (*w)->error();
  EXPECT_EQ((*w)->seq(), 8u);
  EXPECT_EQ((*w)->epoch(), kEpoch);
  EXPECT_EQ(a.applied, 8u);
  EXPECT_EQ(a.digest, c.digest) << "both chains continue from the head's digest";

  // The rebase is durable: the log starts after the head, with the head replica's schema.
  rep_->Stop();
  rep_.reset();
  auto log = replication::ReplicationLog::OpenReader(Path("log.db"));
  ASSERT_TRUE(log.ok()) << log.status().ToString();
  EXPECT_EQ((*log)->first_seq(), 8u);
  EXPECT_EQ((*log)->last_seq(), 8u);
  replication::Digest head{};
  head.fill(0x77);
  auto agreed = (*log)->AgreedDigest(7);
  ASSERT_TRUE(agreed.ok()) << agreed.status().ToString();
  EXPECT_EQ(*agreed, head);
  EXPECT_EQ((*log)->Schema().value(), schema_);
}

TEST_F(ReplicatorPromotionTest, ALogThatHoldsTheHeadIsKeptAndWhatItHoldsBeyondReachesEveryone) {
  options_.promotion_wait = Duration::zero();
  Open();
  FakeReplica a = MakeReplica("rs1");
  a.schema = schema_;
  Join(a);
  rep_->SetLease(Held(kEpoch));
  auto first = Write("UPDATE t SET v = 'one' WHERE id = 1");
  Poll();
  Deliver(a);
  ASSERT_TRUE(first->has_value() && (*first)->ok());
  // seq 2 is sequenced and sent, and the lease is lost before rs1 applies it.
  auto second = Write("UPDATE t SET v = 'two' WHERE id = 1");
  Poll();
  ASSERT_EQ(rep_->last_seq(), 2u);
  rep_->SetLease(LeaseView{false, 0, {}, "another director holds the sequencer lease (B)", "B"});
  rep_->Stop();  // the director restarts; rs1 registers again with its position, seq 1
  options_.schema_db.clear();
  Open();
  a.link->Take();
  Rejoin(a);
  EXPECT_EQ(a.EntriesQueued(), 0u) << "nothing is streamed before a lease";
  rep_->SetLease(Held(kEpoch + 1));
  const ReplicationStatus st = rep_->GetStatus();
  EXPECT_FALSE(st.promoting);
  EXPECT_NE(st.promotion.find("this log holds the replicas' head seq 1"), std::string::npos)
      << st.promotion;
  ASSERT_EQ(a.EntriesQueued(), 1u) << "seq 2, which no replica applied, goes out";
  Deliver(a);
  EXPECT_EQ(a.applied, 2u);
  auto third = Write("UPDATE t SET v = 'three' WHERE id = 1");
  Poll();
  Deliver(a);
  ASSERT_TRUE(third->has_value());
  EXPECT_TRUE((*third)->ok()) << (*third)->error();
  EXPECT_EQ((*third)->seq(), 3u);
}

TEST_F(ReplicatorPromotionTest, WritersOfEntriesARebaseDropsAreToldTheyWereNotApplied) {
  options_.promotion_wait = 500ms;
  Open();
  FakeReplica a = MakeReplica("rs1");
  a.schema = schema_;
  Join(a);
  rep_->SetLease(Held(kEpoch));
  clock_.Advance(500ms);
  for (const char* v : {"'one'", "'two'"}) {
    auto w = Write(std::string("UPDATE t SET v = ") + v + " WHERE id = 1");
    Poll();
    Deliver(a);
    ASSERT_TRUE(w->has_value() && (*w)->ok()) << Error(w);
  }
  auto third = Write("UPDATE t SET v = 'three' WHERE id = 1");
  Poll();
  ASSERT_EQ(rep_->last_seq(), 3u);
  // The lease goes to another director, which sequences its own seq 1..2 for rs2 and rs3 (after
  // a snapshot of ours, say); then this director takes the lease back.
  rep_->SetLease(LeaseView{false, 0, {}, "another director holds the sequencer lease (B)", "B"});
  rep_->SetLease(Held(kEpoch + 2));
  FakeReplica b = At("rs2", 2, 0x22);
  FakeReplica c = At("rs3", 2, 0x22);
  Join(b);
  Join(c);
  clock_.Advance(500ms);
  auto after = Write("UPDATE t SET v = 'new' WHERE id = 1");
  Poll();
  const ReplicationStatus st = rep_->GetStatus();
  EXPECT_NE(st.promotion.find("its seq 3..3 were applied by no replica"), std::string::npos)
      << st.promotion;
  ASSERT_TRUE(third->has_value());
  EXPECT_FALSE((*third)->ok());
  EXPECT_EQ((*third)->code(), kWriteUnavailable);
  EXPECT_NE((*third)->error().find("seq 3 was applied by no replica"), std::string::npos)
      << (*third)->error();
  EXPECT_EQ(rep_->last_seq(), 3u) << "the next write follows the head, seq 2";
  EXPECT_EQ(Info("rs1")->state, ReplicationState::kNeedsSnapshot)
      << "rs1's seq 1..2 are another history than the head's";
  EXPECT_EQ(Info("rs2")->state, ReplicationState::kInSync);
  Deliver(b);
  Deliver(c);
  ASSERT_TRUE(after->has_value());
  EXPECT_TRUE((*after)->ok()) << (*after)->error();
  EXPECT_EQ((*after)->seq(), 3u);
  EXPECT_EQ((*after)->epoch(), kEpoch + 2);
}

}  // namespace
}  // namespace vsc::director
