// The Replicator under an etcd sequencer lease (require_lease, issue 11): it sequences only
// while the lease the keeper reported is held and unexpired, under the lease's epoch, and stops
// when a replica says it follows a newer epoch.
#include <gtest/gtest.h>

#include "director/replicator.h"
#include "director/sequencer_lease.h"
#include "replication/log.h"
#include "unit/director/replicator_fixture.h"

namespace vsc::director {
namespace {

using namespace std::chrono_literals;
using testing::FakeReplica;

class ReplicatorLeaseTest : public testing::ReplicatorFixture {
 protected:
  void SetUp() override {
    ReplicatorFixture::SetUp();
    options_.require_lease = true;
    // These tests are about the lease: the head is chosen as soon as a replica stands somewhere
    // (replicator_promotion_test.cc waits for the replicas).
    options_.promotion_wait = Duration::zero();
  }
  // Opens the replicator with one replica in sync.
  FakeReplica OpenWithReplica() {
    Open();
    FakeReplica a = MakeReplica("rs1");
    Join(a);
    return a;
  }
  static LeaseView HeldByB() {
    return LeaseView{false, 0, {}, "another director holds the sequencer lease (B)", "B"};
  }
  LeaseView Held(uint64_t epoch, Duration for_how_long = 3s) {
    return LeaseView{true, epoch, clock_.Now() + for_how_long, "", ""};
  }
  std::string Refusal(const WriteSlot& w) {
    EXPECT_TRUE(w->has_value());
    if (!w->has_value()) return "";
    EXPECT_FALSE((*w)->ok());
    EXPECT_EQ((*w)->code(), kWriteUnavailable);
    return (*w)->error();
  }
  static constexpr uint64_t kEpoch = kEtcdEpochBase + 42;
};

TEST_F(ReplicatorLeaseTest, NoWriteIsSequencedBeforeTheLeaseIsHeld) {
  FakeReplica a = OpenWithReplica();
  auto w = Write("INSERT INTO t(v) VALUES ('x')");
  Poll();
  EXPECT_NE(Refusal(w).find("the sequencer lease is not held yet"), std::string::npos);
  EXPECT_EQ(rep_->last_seq(), 0u);
  EXPECT_FALSE(rep_->StartVerify().ok());
  status_ = rep_->GetStatus();
  EXPECT_TRUE(status_.lease_required);
  EXPECT_FALSE(status_.sequencing);
}

TEST_F(ReplicatorLeaseTest, AHeldLeaseSequencesUnderItsEpochAndTheLogKeepsIt) {
  FakeReplica a = OpenWithReplica();
  rep_->SetLease(Held(kEpoch));
  auto w = Write("INSERT INTO t(v) VALUES ('x')");
  Poll();
  ASSERT_EQ(a.EntriesQueued(), 1u);
  ASSERT_TRUE(a.link->sent.back().has_replicate());
  EXPECT_EQ(a.link->sent.back().replicate().epoch(), kEpoch) << "the stream names the epoch";
  EXPECT_EQ(a.link->sent.back().replicate().entries(0).epoch(), kEpoch);
  Deliver(a);
  ASSERT_TRUE(w->has_value());
  EXPECT_TRUE((*w)->ok()) << (*w)->error();
  EXPECT_EQ((*w)->epoch(), kEpoch);
  rep_->Stop();
  // Reopened under a lease, the log is not bumped: it keeps the lease's epoch until the next
  // lease, which must be newer.
  options_.schema_db.clear();
  Open();
  EXPECT_EQ(rep_->GetStatus().epoch, kEpoch);
  rep_->SetLease(Held(kEpoch - 1));
  auto old = Write("INSERT INTO t(v) VALUES ('y')");
  Poll();
  EXPECT_NE(Refusal(old).find("is not above the log's epoch"), std::string::npos);
  EXPECT_EQ(rep_->last_seq(), 1u);
  // A later claim with a newer epoch is adopted; the director sequences under it once a replica
  // has said where it stands (promotion): rs1, at the log's head.
  Rejoin(a);
  rep_->SetLease(Held(kEpoch + 1));
  EXPECT_TRUE(rep_->GetStatus().sequencing) << rep_->GetStatus().not_sequencing_reason;
  EXPECT_EQ(rep_->GetStatus().epoch, kEpoch + 1);
}

TEST_F(ReplicatorLeaseTest, AnExpiredLeaseStopsSequencingAtOnceWithoutWordFromTheKeeper) {
  FakeReplica a = OpenWithReplica();
  rep_->SetLease(Held(kEpoch, 3s));
  clock_.Advance(2999ms);
  auto ok = Write("INSERT INTO t(v) VALUES ('x')");
  Poll();
  EXPECT_EQ(rep_->last_seq(), 1u);
  clock_.Advance(1ms);
  auto late = Write("INSERT INTO t(v) VALUES ('y')");
  Poll();
  EXPECT_NE(Refusal(late).find("no quorum for the sequencer lease"), std::string::npos);
  EXPECT_EQ(rep_->last_seq(), 1u);
  // A write accepted while held but flushed after the deadline is refused too.
  rep_->SetLease(Held(kEpoch, 1s));
  auto queued = Write("INSERT INTO t(v) VALUES ('z')");
  clock_.Advance(1s);
  Poll();
  EXPECT_NE(Refusal(queued).find("no quorum"), std::string::npos);
  EXPECT_EQ(rep_->last_seq(), 1u);
  // Nor does it stream: a replica joining behind gets nothing until a lease is held again.
  FakeReplica b = MakeReplica("rs2");
  Join(b);
  Poll();
  EXPECT_EQ(b.EntriesQueued(), 0u);
  rep_->SetLease(Held(kEpoch, 3s));
  ASSERT_EQ(b.EntriesQueued(), 1u);
  EXPECT_EQ(b.link->sent.back().replicate().epoch(), kEpoch);
}

TEST_F(ReplicatorLeaseTest, TheKeepersRefusalIsWhatTheWriterReads) {
  FakeReplica a = OpenWithReplica();
  rep_->SetLease(HeldByB());
  auto w = Write("INSERT INTO t(v) VALUES ('x')");
  Poll();
  EXPECT_EQ(Refusal(w),
            "unavailable: another director holds the sequencer lease (B); the write was not "
            "applied");
  EXPECT_EQ(rep_->GetStatus().not_sequencing_reason,
            "another director holds the sequencer lease (B)");
}

TEST_F(ReplicatorLeaseTest, AStandbyNamesTheHolderUntilItHoldsTheLeaseItself) {
  Open();
  EXPECT_EQ(rep_->StandbyFor(), std::nullopt) << "claiming at start: no holder known";
  rep_->SetLease(HeldByB());
  EXPECT_EQ(rep_->StandbyFor(), std::optional<std::string>("B"));
  rep_->SetLease(Held(kEpoch));
  EXPECT_EQ(rep_->StandbyFor(), std::nullopt);
}

TEST_F(ReplicatorLeaseTest, AReplicaFollowingANewerEpochFencesThisDirectorOff) {
  FakeReplica a = OpenWithReplica();
  rep_->SetLease(Held(kEpoch, 60s));
  auto w = Write("INSERT INTO t(v) VALUES ('x')");
  Poll();
  // The replica has seen a newer director: it refuses the batch and says which epoch it follows.
  a.link->Take();
  proto::ReplicaAck refused;
  refused.set_error("refused: ... older than epoch N ...");
  refused.set_fence_epoch(kEpoch + 5);
  rep_->OnAck("rs1", refused);
  EXPECT_EQ(rep_->counters().fenced_acks.Get(), 1u);
  EXPECT_EQ(Info("rs1")->state, ReplicationState::kFenced);
  EXPECT_FALSE(w->has_value() && (*w)->ok()) << "never answered ok: no replica applied it";
  auto next = Write("INSERT INTO t(v) VALUES ('y')");
  Poll();
  EXPECT_NE(Refusal(next).find("another director holds the sequencer lease (a replica follows "
                               "epoch " +
                               std::to_string(kEpoch + 5)),
            std::string::npos);
  EXPECT_EQ(rep_->GetStatus().fenced_epoch, kEpoch + 5);
  // A newer lease of its own lets it sequence again; the replica, registering again, is
  // streamed what it lacks under the new epoch.
  rep_->SetLease(Held(kEpoch + 9, 60s));
  Rejoin(a);
  Poll();
  ASSERT_GE(a.link->sent.size(), 1u);
  EXPECT_EQ(a.link->sent.back().replicate().epoch(), kEpoch + 9);
  Deliver(a);
  auto again = Write("INSERT INTO t(v) VALUES ('z')");
  Poll();
  EXPECT_EQ(rep_->last_seq(), 2u);
  EXPECT_EQ(a.link->sent.back().replicate().entries(0).epoch(), kEpoch + 9);
}

TEST_F(ReplicatorLeaseTest, WithoutEtcdALeaseViewChangesNothing) {
  options_.require_lease = false;
  FakeReplica a = OpenWithReplica();
  rep_->SetLease(HeldByB());
  auto w = Write("INSERT INTO t(v) VALUES ('x')");
  Poll();
  Deliver(a);
  ASSERT_TRUE(w->has_value());
  EXPECT_TRUE((*w)->ok()) << (*w)->error();
  EXPECT_LT(rep_->GetStatus().epoch, kEtcdEpochBase);
}

}  // namespace
}  // namespace vsc::director
