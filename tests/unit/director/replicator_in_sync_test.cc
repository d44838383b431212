// The Replicator's in-sync record (issue 11, in_sync_record.h): under a lease and policy `all`,
// an answer is released only while the set etcd holds is within the replicas in sync; a replica
// leaving makes the next answers wait for etcd to hold the smaller set; one catching up is
// recorded lazily; a promotion resumes only once a replica of the last record registered. The
// store is a fake the test answers by hand, as the InSyncRecorder's thread would.
#include <gtest/gtest.h>

#include "director/in_sync_record.h"
#include "director/replicator.h"
#include "director/sequencer_lease.h"
#include "replication/mirror.h"
#include "unit/director/replicator_fixture.h"

namespace vsc::director {
namespace {

using namespace std::chrono_literals;
using testing::FakeReplica;

struct FakeInSyncStore : InSyncStore {
  void Read(uint64_t epoch) override { reads.push_back(epoch); }
  void Write(const InSyncRecord& record) override { writes.push_back(record); }
  std::string Where() const override { return "/vscluster/test/in_sync"; }
  std::vector<uint64_t> reads;
  std::vector<InSyncRecord> writes;
};

class ReplicatorInSyncTest : public testing::ReplicatorFixture {
 protected:
  void SetUp() override {
    ReplicatorFixture::SetUp();
    options_.require_lease = true;
    options_.promotion_wait = 500ms;
    auto ddl = replication::SchemaMirror::ReadSchema(Path("boot.db"));
    ASSERT_TRUE(ddl.ok()) << ddl.status().ToString();
    schema_ = *ddl;
  }
  void OpenWithStore() {
    Open();
    rep_->SetInSyncStore(&store_);
  }
  LeaseView Held(uint64_t epoch) { return LeaseView{true, epoch, clock_.Now() + 60s, "", ""}; }
  FakeReplica At(const std::string& id, uint64_t applied, uint8_t digest_byte) {
    FakeReplica r = MakeReplica(id);
    r.applied = applied;
    if (applied > 0) r.digest.fill(digest_byte);
    r.schema = schema_;
    return r;
  }
  // Takes the lease with etcd holding `previous`; the replicas are registered already.
  void Promote(std::optional<InSyncRecord> previous) {
    rep_->SetLease(Held(kEpoch));
    ASSERT_EQ(store_.reads.size(), 1u) << "the record is read when the promotion starts";
    EXPECT_EQ(store_.reads.back(), kEpoch);
    rep_->OnInSyncRead(kEpoch, previous);
    clock_.Advance(500ms);
    rep_->Submit(proto::WriteRequest(), [](const proto::WriteResponse&) {});  // ends the window
  }
  // Promoted with `a` and `b` at seq 0, etcd holding the set {a, b} of this epoch.
  void PromotedWithBoth(FakeReplica& a, FakeReplica& b) {
    OpenWithStore();
    Join(a);
    Join(b);
    ASSERT_NO_FATAL_FAILURE(Promote(std::nullopt));
    ASSERT_NO_FATAL_FAILURE(Confirm());
  }
  // `a` registered, the lease taken, and etcd's last record read: `last`.
  void PromotingWithRecord(FakeReplica& a, const InSyncRecord& last) {
    OpenWithStore();
    Join(a);
    rep_->SetLease(Held(kEpoch));
    rep_->OnInSyncRead(kEpoch, std::optional<InSyncRecord>{last});
  }
  // One UPDATE, sequenced and applied by `a` and `b`: its answer's slot.
  WriteSlot WriteToBoth(FakeReplica& a, FakeReplica& b, const std::string& value) {
    auto w = Write("UPDATE t SET v = '" + value + "' WHERE id = 1");
    Poll();
    Deliver(a);
    Deliver(b);
    return w;
  }
  // etcd takes the last record the replicator asked for.
  void Confirm() {
    ASSERT_FALSE(store_.writes.empty());
    rep_->OnInSyncWritten(store_.writes.back(), Status::Ok());
  }
  // One tick of the replicator's timer (200 ms of real time: asio's, not the manual clock).
  void RunTick() {
    if (!started_) rep_->Start();
    started_ = true;
    io_.restart();
    io_.run_for(300ms);
  }
  bool started_ = false;
  void GoDown(FakeReplica& r) {
    rep_->Detach(r.id, r.link.get());
    plane_.OnSessionClosed(r.id, r.session, clock_.Now());
  }
  static ReplicaSet Set(std::initializer_list<std::string> ids) { return ReplicaSet(ids); }
  static constexpr uint64_t kEpoch = kEtcdEpochBase + 91;
  FakeInSyncStore store_;
  std::vector<std::string> schema_;
};

TEST_F(ReplicatorInSyncTest, NothingIsAnsweredUnderANewEpochBeforeEtcdHoldsItsSet) {
  OpenWithStore();
  FakeReplica a = At("rs1", 0, 0);
  FakeReplica b = At("rs2", 0, 0);
  Join(a);
  Join(b);
  Promote(std::nullopt);
  ASSERT_FALSE(rep_->GetStatus().promoting) << rep_->GetStatus().promotion;
  ASSERT_EQ(store_.writes.size(), 1u) << "the promoted director asks etcd to record its set";
  EXPECT_EQ(store_.writes[0].members, Set({"rs1", "rs2"}));
  EXPECT_EQ(store_.writes[0].epoch, kEpoch);

  auto w = WriteToBoth(a, b, "x");
  EXPECT_FALSE(w->has_value()) << "decided, but etcd does not hold this director's set yet";
  EXPECT_EQ(rep_->GetStatus().answers_held, 1u);
  Confirm();
  ASSERT_TRUE(w->has_value());
  EXPECT_TRUE((*w)->ok()) << (*w)->error();
  EXPECT_EQ(rep_->GetStatus().answers_held, 0u);
  EXPECT_EQ(rep_->counters().writes_committed.Get(), 1u);

  auto next = WriteToBoth(a, b, "y");
  ASSERT_TRUE(next->has_value()) << "etcd's set is the replicas in sync: no wait";
  EXPECT_TRUE((*next)->ok());
  EXPECT_EQ(store_.writes.size(), 1u) << "an unchanged set is not written again";
}

TEST_F(ReplicatorInSyncTest, AnAnswerThatReliesOnAReplicaLeavingWaitsForEtcdToHoldTheSmallerSet) {
  FakeReplica a = At("rs1", 0, 0);
  FakeReplica b = At("rs2", 0, 0);
  ASSERT_NO_FATAL_FAILURE(PromotedWithBoth(a, b));
  auto w = Write("UPDATE t SET v = 'x' WHERE id = 1");
  Poll();
  Deliver(a);
  EXPECT_FALSE(w->has_value()) << "rs2 has not acked";
  GoDown(b);  // the write is now decided by rs1 alone
  EXPECT_FALSE(w->has_value()) << "etcd still names rs2, which lacks the write";
  ASSERT_EQ(store_.writes.size(), 2u);
  EXPECT_EQ(store_.writes.back().members, Set({"rs1"}));
  // A failed write (etcd without quorum) is asked again at the next tick.
  rep_->OnInSyncWritten(store_.writes.back(), Unavailable("etcd: no quorum"));
  EXPECT_FALSE(w->has_value());
  EXPECT_NE(rep_->GetStatus().in_sync_error.find("no quorum"), std::string::npos);
  RunTick();
  ASSERT_EQ(store_.writes.size(), 3u) << "the tick asks again";
  Confirm();
  ASSERT_TRUE(w->has_value());
  EXPECT_TRUE((*w)->ok()) << (*w)->error();
  EXPECT_EQ(rep_->GetStatus().in_sync_recorded, std::vector<std::string>{"rs1"});
}

TEST_F(ReplicatorInSyncTest, AReplicaThatCaughtUpJoinsTheRecordLazilyAndHoldsNothing) {
  OpenWithStore();
  FakeReplica a = At("rs1", 0, 0);
  Join(a);
  Promote(std::nullopt);
  Confirm();
  auto w = Write("UPDATE t SET v = 'x' WHERE id = 1");
  Poll();
  Deliver(a);
  ASSERT_TRUE(w->has_value() && (*w)->ok());
  FakeReplica b = At("rs2", 0, 0);
  Join(b);  // behind by one: catches up from the log
  Deliver(b);
  EXPECT_EQ(Info("rs2")->state, ReplicationState::kInSync);
  auto next = WriteToBoth(a, b, "y");
  ASSERT_TRUE(next->has_value()) << "etcd's {rs1} is within {rs1, rs2}";
  EXPECT_TRUE((*next)->ok());
  RunTick();
  ASSERT_GE(store_.writes.size(), 2u);
  EXPECT_EQ(store_.writes.back().members, Set({"rs1", "rs2"})) << "recorded at a tick";
}

TEST_F(ReplicatorInSyncTest, APromotionWaitsForAReplicaOfTheLastRecordedSet) {
  FakeReplica a = At("rs1", 5, 0x55);  // went down earlier; rs2 acknowledged seq 6..7 alone
  PromotingWithRecord(a, InSyncRecord{kEpoch - 3, 7, Set({"rs2"})});
  clock_.Advance(800ms);
  auto early = Write("UPDATE t SET v = 'x' WHERE id = 1");
  Poll();
  ASSERT_TRUE(early->has_value());
  EXPECT_NE((*early)->error().find("waiting for a replica of the last in-sync set (rs2)"),
            std::string::npos)
      << (*early)->error();
  EXPECT_NE((*early)->error().find("delete /vscluster/test/in_sync"), std::string::npos);
  EXPECT_TRUE(rep_->GetStatus().promoting);

  FakeReplica b = At("rs2", 7, 0x77);
  Join(b);
  auto w = Write("UPDATE t SET v = 'y' WHERE id = 1");
  Poll();
  const ReplicationStatus st = rep_->GetStatus();
  EXPECT_FALSE(st.promoting);
  EXPECT_NE(st.promotion.find("head seq 7"), std::string::npos) << st.promotion;
  EXPECT_EQ(Info("rs1")->state, ReplicationState::kNeedsSnapshot) << "seq 6..7 are rs2's alone";
  EXPECT_EQ(rep_->last_seq(), 8u);
}

TEST_F(ReplicatorInSyncTest, APromotionEndsAsSoonAsEveryReplicaOfTheLastSetHasRegistered) {
  FakeReplica a = At("rs1", 6, 0x66);
  PromotingWithRecord(a, InSyncRecord{kEpoch - 3, 6, Set({"rs1", "rs2"})});
  EXPECT_TRUE(rep_->GetStatus().promoting) << "rs2 of the last set has not registered";
  FakeReplica b = At("rs2", 6, 0x66);
  Join(b);
  auto w = Write("UPDATE t SET v = 'x' WHERE id = 1");  // no time has passed: the window is open
  Poll();
  const ReplicationStatus st = rep_->GetStatus();
  EXPECT_FALSE(st.promoting) << "both hold every acknowledged write: nothing left to wait for";
  EXPECT_NE(st.promotion.find("head seq 6"), std::string::npos) << st.promotion;
  EXPECT_EQ(rep_->last_seq(), 7u);
}

TEST_F(ReplicatorInSyncTest, DeletingTheRecordLetsAPromotionGoOnWithTheReplicasPresent) {
  FakeReplica a = At("rs1", 5, 0x55);
  PromotingWithRecord(a, InSyncRecord{kEpoch - 3, 7, Set({"rs2"})});
  clock_.Advance(600ms);
  Poll();
  EXPECT_TRUE(rep_->GetStatus().promoting);
  clock_.Advance(1s);
  RunTick();
  ASSERT_GE(store_.reads.size(), 2u) << "a waiting promotion reads the record again";
  rep_->OnInSyncRead(kEpoch, std::optional<InSyncRecord>{});  // the operator deleted it
  const ReplicationStatus st = rep_->GetStatus();
  EXPECT_FALSE(st.promoting) << st.promotion;
  EXPECT_NE(st.promotion.find("head seq 5"), std::string::npos) << st.promotion;
}

TEST_F(ReplicatorInSyncTest, HeldAnswersOfALostLeaseAreUnknownAndSayToRetryWithTheKey) {
  FakeReplica a = At("rs1", 0, 0);
  FakeReplica b = At("rs2", 0, 0);
  ASSERT_NO_FATAL_FAILURE(PromotedWithBoth(a, b));
  proto::WriteRequest req;
  req.set_request_id(77);
  req.set_idempotency_key("order-1");
  ToProto(replication::Statement{"UPDATE t SET v = 'k' WHERE id = 1", {}}, req.add_statements());
  std::optional<proto::WriteResponse> answer;
  rep_->Submit(req, [&](const proto::WriteResponse& r) { answer = r; });
  Poll();
  Deliver(a);
  GoDown(b);
  ASSERT_FALSE(answer.has_value());
  rep_->SetLease(LeaseView{false, 0, {}, "no quorum for the sequencer lease (etcd)", ""});
  ASSERT_TRUE(answer.has_value());
  EXPECT_FALSE(answer->ok());
  EXPECT_EQ(answer->code(), kWriteUnknown);
  EXPECT_NE(answer->error().find("before etcd recorded the in-sync set"), std::string::npos)
      << answer->error();
  EXPECT_NE(answer->error().find("retry with the same idempotency key"), std::string::npos);
  EXPECT_EQ(rep_->GetStatus().answers_held, 0u);
}

TEST_F(ReplicatorInSyncTest, UnderPolicyMajorityNoRecordIsKept) {
  options_.policy = replication::CommitPolicy::kMajority;
  OpenWithStore();
  FakeReplica a = At("rs1", 0, 0);
  Join(a);
  rep_->SetLease(Held(kEpoch));
  EXPECT_TRUE(store_.reads.empty());
  clock_.Advance(500ms);
  auto w = Write("UPDATE t SET v = 'x' WHERE id = 1");
  Poll();
  Deliver(a);
  ASSERT_TRUE(w->has_value());
  EXPECT_TRUE((*w)->ok()) << (*w)->error();
  EXPECT_TRUE(store_.writes.empty());
  EXPECT_FALSE(rep_->GetStatus().in_sync_recorded_required);
}

}  // namespace
}  // namespace vsc::director
