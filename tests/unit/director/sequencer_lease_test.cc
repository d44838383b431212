// SequencerLease, the pure state machine of the sequencer's etcd lease, driven by hand: the
// test plays etcd (answers) and the clock.
#include "director/sequencer_lease.h"

#include <gtest/gtest.h>

namespace vsc::director {
namespace {

using namespace std::chrono_literals;
using K = LeaseAction::Kind;

etcd::TxnResult Claimed(int64_t lease, int64_t create_revision, bool succeeded = true,
                        std::string holder = "me") {
  etcd::TxnResult t;
  t.succeeded = succeeded;
  t.kv = etcd::KeyValue{"/vscluster/c/sequencer", std::move(holder), create_revision,
                        create_revision, lease};
  return t;
}

class SequencerLeaseTest : public ::testing::Test {
 protected:
  // Grants lease `id` and claims the key at revision `rev`, as etcd would answer.
  void Acquire(int64_t id, int64_t rev) {
    lease_.Tick(now_);
    ASSERT_EQ(lease_.Next(now_).kind, K::kGrant);
    lease_.OnGranted({id, 3}, now_);
    ASSERT_EQ(lease_.Next(now_).kind, K::kAcquire);
    EXPECT_EQ(lease_.Next(now_).lease_id, id);
    lease_.OnAcquire(Claimed(id, rev), now_);
  }
  void Advance(Duration d) { now_ += d; }

  TimePoint now_ = TimePoint(1000s);
  SequencerLease lease_{3000ms};
};

TEST_F(SequencerLeaseTest, HeldUnderAnEpochFromTheKeysCreateRevision) {
  EXPECT_EQ(lease_.ttl_seconds(), 3);
  EXPECT_EQ(lease_.period(), 1000ms);
  LeaseView before = lease_.View(now_);
  EXPECT_FALSE(before.held);
  EXPECT_NE(before.refusal.find("not held yet"), std::string::npos) << before.refusal;
  Acquire(7, 42);
  LeaseView v = lease_.View(now_);
  ASSERT_TRUE(v.held) << v.refusal;
  EXPECT_EQ(v.epoch, kEtcdEpochBase + 42);
  EXPECT_EQ(v.valid_until, now_ + 3000ms);
  // Nothing to do until the first keepalive, a third of the TTL later.
  LeaseAction wait = lease_.Next(now_);
  EXPECT_EQ(wait.kind, K::kWait);
  EXPECT_EQ(wait.at, now_ + 1000ms);
}

TEST_F(SequencerLeaseTest, KeepalivesEveryThirdOfTheTtlKeepItHeld) {
  Acquire(7, 42);
  for (int i = 0; i < 10; ++i) {
    Advance(1000ms);
    lease_.Tick(now_);
    LeaseAction a = lease_.Next(now_);
    ASSERT_EQ(a.kind, K::kKeepAlive) << i;
    EXPECT_EQ(a.lease_id, 7);
    lease_.OnKeepAlive(3, now_);
    LeaseView v = lease_.View(now_);
    ASSERT_TRUE(v.held) << i;
    EXPECT_EQ(v.valid_until, now_ + 3000ms);
    EXPECT_EQ(v.epoch, kEtcdEpochBase + 42) << "the epoch stays while the lease lives";
  }
}

TEST_F(SequencerLeaseTest, NoKeepaliveAnsweredWithinTheTtlLosesItAtOnce) {
  Acquire(7, 42);
  const TimePoint sent = now_;
  // etcd unreachable: every keepalive fails; the lease is held until sent + TTL, not a moment
  // longer, whatever the keeper is doing.
  for (Duration at : {1000ms, 1500ms, 2000ms, 2500ms}) {
    now_ = sent + at;
    lease_.Tick(now_);
    ASSERT_EQ(lease_.Next(now_).kind, K::kKeepAlive) << ToMillis(at);
    lease_.OnError(K::kKeepAlive, Unavailable("etcd: no endpoint answered"), now_);
    EXPECT_TRUE(lease_.View(now_).held) << ToMillis(at);
  }
  EXPECT_EQ(lease_.Next(now_).at, sent + 3000ms) << "the retry never waits past the deadline";
  EXPECT_TRUE(lease_.View(sent + 2999ms).held);
  LeaseView lost = lease_.View(sent + 3000ms);
  EXPECT_FALSE(lost.held) << "View alone says so, before Tick";
  EXPECT_NE(lost.refusal.find("no quorum for the sequencer lease"), std::string::npos)
      << lost.refusal;
  EXPECT_NE(lost.refusal.find("no endpoint answered"), std::string::npos) << lost.refusal;
  // Then the old lease is revoked (best effort) and a new one granted, under a new epoch.
  now_ = sent + 3000ms;
  lease_.Tick(now_);
  LeaseAction revoke = lease_.Next(now_);
  ASSERT_EQ(revoke.kind, K::kRevoke);
  EXPECT_EQ(revoke.lease_id, 7);
  lease_.OnError(K::kRevoke, Unavailable("still down"), now_);
  EXPECT_EQ(lease_.Next(now_).kind, K::kGrant);
  lease_.OnGranted({8, 3}, now_);
  lease_.OnAcquire(Claimed(8, 57), now_);
  ASSERT_TRUE(lease_.View(now_).held);
  EXPECT_EQ(lease_.View(now_).epoch, kEtcdEpochBase + 57);
}

TEST_F(SequencerLeaseTest, AnotherHolderMakesAStandbyThatRetriesAndTakesOver) {
  lease_.Tick(now_);
  lease_.OnGranted({9, 3}, now_);
  lease_.OnAcquire(Claimed(5, 42, /*succeeded=*/false, "director A"), now_);
  LeaseView v = lease_.View(now_);
  EXPECT_FALSE(v.held);
  EXPECT_EQ(v.refusal, "another director holds the sequencer lease (director A)");
  EXPECT_EQ(v.holder, "director A");
  // The standby keeps its own lease alive and claims the key again every period.
  Advance(1000ms);
  lease_.Tick(now_);
  EXPECT_EQ(lease_.Next(now_).kind, K::kAcquire);
  lease_.OnAcquire(Claimed(5, 42, false, "director A"), now_);
  EXPECT_EQ(lease_.Next(now_).kind, K::kKeepAlive);
  lease_.OnKeepAlive(3, now_);
  EXPECT_FALSE(lease_.View(now_).held);
  // A's lease expired in etcd and the key went with it: the next claim creates it anew.
  Advance(1000ms);
  lease_.Tick(now_);
  ASSERT_EQ(lease_.Next(now_).kind, K::kAcquire);
  lease_.OnAcquire(Claimed(9, 60), now_);
  ASSERT_TRUE(lease_.View(now_).held);
  EXPECT_EQ(lease_.View(now_).holder, "");
  EXPECT_GT(lease_.View(now_).epoch, kEtcdEpochBase + 42);
}

// A standby watches the holder's key from the revision after the one its claim saw; the key's
// delete makes the next claim due at once, a period before the periodic one.
TEST_F(SequencerLeaseTest, AStandbyWatchesTheHoldersKeyAndClaimsAsItGoes) {
  lease_.Tick(now_);
  EXPECT_EQ(lease_.WatchFrom(), std::nullopt) << "no lease yet";
  lease_.OnGranted({9, 3}, now_);
  EXPECT_EQ(lease_.WatchFrom(), std::nullopt) << "no holder seen yet";
  lease_.OnAcquire(Claimed(5, 42, /*succeeded=*/false, "director A"), now_);
  EXPECT_EQ(lease_.WatchFrom(), std::optional<int64_t>(43));
  Advance(100ms);
  lease_.Tick(now_);
  ASSERT_EQ(lease_.Next(now_).kind, K::kWait);
  lease_.OnHolderGone(now_);
  EXPECT_EQ(lease_.WatchFrom(), std::nullopt) << "not again before the next claim looked";
  ASSERT_EQ(lease_.Next(now_).kind, K::kAcquire);
  lease_.OnAcquire(Claimed(9, 60), now_);
  ASSERT_TRUE(lease_.View(now_).held);
  EXPECT_EQ(lease_.WatchFrom(), std::nullopt) << "the holder watches nothing";
  // Without etcd's answers there is nothing to watch from.
  SequencerLease other(3s, "b");
  other.Tick(now_);
  other.OnGranted({11, 3}, now_);
  other.OnAcquire(Claimed(9, 60, false, "director A"), now_);
  other.OnError(K::kAcquire, Unavailable("etcd down"), now_);
  EXPECT_EQ(other.WatchFrom(), std::nullopt);
}

TEST_F(SequencerLeaseTest, WhileEtcdDoesNotAnswerTheHolderIsNotKnown) {
  lease_.Tick(now_);
  lease_.OnGranted({9, 3}, now_);
  lease_.OnAcquire(Claimed(5, 42, /*succeeded=*/false, "director A"), now_);
  ASSERT_EQ(lease_.View(now_).holder, "director A");
  Advance(1000ms);
  lease_.Tick(now_);
  lease_.OnError(lease_.Next(now_).kind, Unavailable("etcdserver: no leader"), now_);
  EXPECT_EQ(lease_.View(now_).holder, "") << "a standby must not turn servers away on old news";
  EXPECT_EQ(lease_.View(now_).refusal, "no quorum for the sequencer lease (etcdserver: no leader)");
}

TEST_F(SequencerLeaseTest, AClaimThatTimedOutButLandedIsRecognisedByItsLease) {
  lease_.Tick(now_);
  lease_.OnGranted({9, 3}, now_);
  lease_.OnError(K::kAcquire, Unavailable("etcd: request timed out"), now_);
  EXPECT_FALSE(lease_.View(now_).held);
  Advance(1000ms);
  lease_.Tick(now_);
  ASSERT_EQ(lease_.Next(now_).kind, K::kAcquire);
  // The compare fails (the key exists) but the key is under our own lease.
  lease_.OnAcquire(Claimed(9, 61, /*succeeded=*/false, "me"), now_);
  ASSERT_TRUE(lease_.View(now_).held);
  EXPECT_EQ(lease_.View(now_).epoch, kEtcdEpochBase + 61);
}

TEST_F(SequencerLeaseTest, OurOwnKeyUnderALostLeaseIsRevokedAndClaimedAtOnce) {
  SequencerLease lease(3000ms, "me");
  lease.OnGranted({7, 3}, now_);
  lease.OnAcquire(Claimed(7, 42), now_);
  // etcd lost its quorum for longer than the TTL: we gave the lease up, etcd kept it.
  lease.Tick(now_ + 3000ms);
  lease.OnError(K::kRevoke, Unavailable("no quorum"), now_ + 3000ms);
  now_ += 5000ms;
  lease.OnGranted({8, 3}, now_);
  lease.OnAcquire(Claimed(7, 42, /*succeeded=*/false, "me"), now_);
  EXPECT_FALSE(lease.View(now_).held);
  EXPECT_EQ(lease.View(now_).refusal.find("another director"), std::string::npos)
      << "it is not another director";
  LeaseAction revoke = lease.Next(now_);
  ASSERT_EQ(revoke.kind, K::kRevoke);
  EXPECT_EQ(revoke.lease_id, 7);
  lease.OnRevoked();
  ASSERT_EQ(lease.Next(now_).kind, K::kAcquire) << "at once, not a period later";
  lease.OnAcquire(Claimed(8, 70), now_);
  EXPECT_EQ(lease.View(now_).epoch, kEtcdEpochBase + 70);
}

TEST_F(SequencerLeaseTest, ALeaseEtcdForgotIsLostAndGrantedAgain) {
  Acquire(7, 42);
  Advance(1000ms);
  lease_.Tick(now_);
  lease_.OnError(K::kKeepAlive, NotFound("etcd: the lease expired"), now_);
  LeaseView v = lease_.View(now_);
  EXPECT_FALSE(v.held);
  EXPECT_NE(v.refusal.find("lost"), std::string::npos) << v.refusal;
  EXPECT_EQ(lease_.Next(now_).kind, K::kRevoke);
  lease_.OnRevoked();
  EXPECT_EQ(lease_.Next(now_).kind, K::kGrant);
}

TEST_F(SequencerLeaseTest, ATtlEtcdGrantsLongerIsCountedAsOursAndShorterAsEtcds) {
  SequencerLease shorter(5000ms);
  shorter.OnGranted({1, 2}, now_);  // etcd never grants less than asked; counted anyway
  shorter.OnAcquire(Claimed(1, 3), now_);
  EXPECT_EQ(shorter.View(now_).valid_until, now_ + 2000ms);
  SequencerLease longer(1000ms);
  EXPECT_EQ(longer.ttl_seconds(), 1);
  longer.OnGranted({1, 2}, now_);  // etcd raised it to its minimum
  longer.OnAcquire(Claimed(1, 3), now_);
  EXPECT_EQ(longer.View(now_).valid_until, now_ + 1000ms);
}

TEST_F(SequencerLeaseTest, AnUnreachableEtcdAtStartIsNoQuorum) {
  lease_.Tick(now_);
  ASSERT_EQ(lease_.Next(now_).kind, K::kGrant);
  lease_.OnError(K::kGrant, Unavailable("etcd: no endpoint answered /v3/lease/grant"), now_);
  LeaseView v = lease_.View(now_);
  EXPECT_FALSE(v.held);
  EXPECT_NE(v.refusal.find("no quorum for the sequencer lease"), std::string::npos);
  LeaseAction a = lease_.Next(now_);
  EXPECT_EQ(a.kind, K::kWait);
  EXPECT_EQ(a.at, now_ + 1000ms);
}

}  // namespace
}  // namespace vsc::director
