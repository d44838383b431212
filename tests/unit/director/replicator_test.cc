// Replicator against in-test replicas: a fake session link records what the director sends, and
// a fake replica answers Replicate batches with acks whose digests follow the real chain. The
// log and the schema mirror are the real ones, in a temporary directory; the event loop is
// polled by hand (group commit is one posted handler), and no timer runs.
#include "director/replicator.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <chrono>

#include "director/replication_wire.h"
#include "proto/envelope.h"
#include "replication/digest.h"
#include "replication/replica_store.h"
#include "unit/director/replicator_fixture.h"

namespace vsc::director {
namespace {

using namespace std::chrono_literals;
using replication::Digest;

using testing::FakeLink;
using testing::FakeReplica;

class ReplicatorTest : public testing::ReplicatorFixture {};

TEST_F(ReplicatorTest, ANewLogNeedsTheBootstrapDatabase) {
  options_.schema_db.clear();
  auto r = Replicator::Open(io_, plane_, clock_, options_);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("schema_db"), std::string::npos) << r.status().ToString();
}

TEST_F(ReplicatorTest, WriteIsAnsweredOnlyWhenEveryReplicaAcked) {
  Open();
  FakeReplica a = MakeReplica("rs1"), b = MakeReplica("rs2");
  EXPECT_FALSE(Join(a).needs_catch_up());
  EXPECT_FALSE(Join(b).needs_catch_up());
  EXPECT_EQ(plane_.membership().Find("rs1")->state, membership::State::kActive);
  auto w = Write("INSERT INTO t(v) VALUES (?1)", {replication::Value::Text("two")});
  EXPECT_FALSE(w->has_value());
  Poll();
  EXPECT_EQ(rep_->last_seq(), 1u);
  EXPECT_EQ(a.EntriesQueued(), 1u);
  EXPECT_EQ(b.EntriesQueued(), 1u);
  Deliver(a);
  EXPECT_FALSE(w->has_value()) << "policy all: rs2 has not acked";
  Deliver(b);
  ASSERT_TRUE(w->has_value());
  EXPECT_TRUE((*w)->ok()) << (*w)->error();
  EXPECT_EQ((*w)->seq(), 1u);
  EXPECT_EQ((*w)->rows_changed(), 1);
  EXPECT_EQ((*w)->request_id(), request_id_);
  status_ = rep_->GetStatus();
  EXPECT_EQ(status_.committed_seq, 1u);
  EXPECT_EQ(status_.update_queue, 0u);
  EXPECT_EQ(Info("rs1")->state, ReplicationState::kInSync);
  EXPECT_EQ(Info("rs2")->applied_seq, 1u);
}

TEST_F(ReplicatorTest, WritesOfOneTurnShareOneLogAppend) {
  Open();
  FakeReplica a = MakeReplica("rs1");
  Join(a);
  std::vector<std::shared_ptr<std::optional<proto::WriteResponse>>> ws;
  for (int i = 0; i < 5; ++i) ws.push_back(Write("INSERT INTO t(v) VALUES ('x')"));
  Poll();
  EXPECT_EQ(rep_->counters().group_commits.Get(), 1u);
  EXPECT_EQ(rep_->counters().entries_sequenced.Get(), 5u);
  ASSERT_EQ(a.link->sent.size(), 1u);
  EXPECT_EQ(a.link->sent[0].replicate().entries_size(), 5);
  EXPECT_EQ(a.link->sent[0].replicate().head_seq(), 5u);
  Deliver(a);
  for (size_t i = 0; i < ws.size(); ++i) {
    ASSERT_TRUE(ws[i]->has_value());
    EXPECT_EQ((*ws[i])->seq(), i + 1);
  }
}

TEST_F(ReplicatorTest, RefusedWritesAreNeverSequenced) {
  Open();
  auto none = Write("INSERT INTO t(v) VALUES ('x')");
  ASSERT_TRUE(none->has_value());
  EXPECT_EQ((*none)->code(), kWriteUnavailable);
  EXPECT_NE((*none)->error().find("not applied"), std::string::npos) << (*none)->error();

  FakeReplica a = MakeReplica("rs1");
  Join(a);
  auto read = Write("SELECT * FROM t");
  ASSERT_TRUE(read->has_value());
  EXPECT_EQ((*read)->code(), kWriteRefused);
  EXPECT_NE((*read)->error().find("read-only"), std::string::npos) << (*read)->error();
  auto syntax = Write("INSERT INTO nope VALUES (1)");
  ASSERT_TRUE(syntax->has_value());
  EXPECT_EQ((*syntax)->code(), kWriteRefused);
  EXPECT_EQ((*syntax)->error().rfind("statement refused: ", 0), 0u) << (*syntax)->error();
  auto big = Write(std::string(kMaxSqlBytes + 1, ' '));
  ASSERT_TRUE(big->has_value());
  EXPECT_NE((*big)->error().find("over the limit"), std::string::npos) << (*big)->error();
  Poll();
  EXPECT_EQ(rep_->last_seq(), 0u);
  EXPECT_TRUE(a.link->sent.empty());
  EXPECT_EQ(rep_->counters().writes_refused.Get(), 3u);
}

TEST_F(ReplicatorTest, AWriteOfTheLargestPayloadTravelsInOneReplicateEnvelope) {
  Open();
  FakeReplica a = MakeReplica("rs1");
  Join(a);
  const std::string sql = "INSERT INTO t(v) VALUES (?)";
  // Submit counts the SQL and 8 bytes a parameter on top of its bytes.
  const size_t largest = kMaxWritePayload - sql.size() - 8;
  auto over = Write(sql, {replication::Value::Blob(std::string(largest + 1, 'b'))});
  ASSERT_TRUE(over->has_value());
  EXPECT_EQ((*over)->code(), kWriteRefused);
  EXPECT_NE((*over)->error().find("more than " + std::to_string(kMaxWritePayload) +
                                  " bytes of SQL and parameters"),
            std::string::npos)
      << (*over)->error();
  auto small = Write("INSERT INTO t(v) VALUES ('x')");
  auto w = Write(sql, {replication::Value::Blob(std::string(largest, 'b'))});
  Poll();
  // The small entry goes first; the large one travels alone (maybe once the window has room).
  bool seen = false;
  for (int round = 0; round < 3 && !seen; ++round) {
    for (const proto::Message& m : a.link->sent) {
      for (const proto::LogEntry& e : m.replicate().entries()) {
        if (e.seq() != 2) continue;
        seen = true;
        EXPECT_EQ(m.replicate().entries_size(), 1);
        EXPECT_LE(m.ByteSizeLong(), proto::kMaxBodyBytes) << "must fit one envelope";
      }
    }
    Deliver(a);
  }
  EXPECT_TRUE(seen) << "the large entry was never sent";
  ASSERT_TRUE(w->has_value() && small->has_value());
  EXPECT_TRUE((*w)->ok()) << (*w)->error();
  EXPECT_EQ((*w)->seq(), 2u);
}

TEST_F(ReplicatorTest, AFullUpdateQueueRefusesWithOverloaded) {
  options_.update_queue = 2;
  Open();
  FakeReplica a = MakeReplica("rs1");
  Join(a);
  auto w1 = Write("INSERT INTO t(v) VALUES ('x')");
  auto w2 = Write("INSERT INTO t(v) VALUES ('x')");
  auto w3 = Write("INSERT INTO t(v) VALUES ('x')");
  ASSERT_TRUE(w3->has_value());
  EXPECT_EQ((*w3)->code(), kWriteOverloaded);
  EXPECT_EQ((*w3)->error().rfind("overloaded: update queue full (2)", 0), 0u) << (*w3)->error();
  Poll();
  EXPECT_EQ(rep_->GetStatus().update_queue, 2u);  // sequenced, waiting for the ack
  Deliver(a);
  EXPECT_TRUE(w1->has_value() && w2->has_value());
  auto w4 = Write("INSERT INTO t(v) VALUES ('x')");
  EXPECT_FALSE(w4->has_value()) << "room again once the first two were decided";
}

TEST_F(ReplicatorTest, AReturningReplicaCatchesUpFromTheLogThenServes) {
  Open();
  FakeReplica a = MakeReplica("rs1");
  Join(a);
  for (int i = 0; i < 3; ++i) Write("INSERT INTO t(v) VALUES ('x')");
  Poll();
  Deliver(a);
  FakeReplica b = MakeReplica("rs2");
  Admission adm = Join(b);
  EXPECT_TRUE(adm.needs_catch_up());
  EXPECT_EQ(adm.plan.from_seq, 1u);
  EXPECT_EQ(plane_.membership().Find("rs2")->state, membership::State::kCatchingUp);
  EXPECT_EQ(Info("rs2")->state, ReplicationState::kCatchingUp);
  EXPECT_EQ(b.EntriesQueued(), 3u);
  // A write during catch-up does not wait for rs2.
  auto w = Write("INSERT INTO t(v) VALUES ('y')");
  Poll();
  Deliver(a);
  ASSERT_TRUE(w->has_value());
  EXPECT_TRUE((*w)->ok());
  Deliver(b);  // entries 1..4
  EXPECT_EQ(Info("rs2")->state, ReplicationState::kInSync);
  EXPECT_EQ(plane_.membership().Find("rs2")->state, membership::State::kActive);
  EXPECT_EQ(b.digest, a.digest);
  // Now it counts for commits.
  auto w2 = Write("INSERT INTO t(v) VALUES ('z')");
  Poll();
  Deliver(a);
  EXPECT_FALSE(w2->has_value());
  Deliver(b);
  EXPECT_TRUE(w2->has_value());
}

TEST_F(ReplicatorTest, WrongContentOrUnknownHistoryGetsASnapshotFromAHealthyPeer) {
  Open();
  FakeReplica a = MakeReplica("rs1");
  Join(a);
  FakeReplica b = MakeReplica("rs2");
  b.content_checksum = "something else";
  Admission adm = Join(b);
  EXPECT_EQ(adm.plan.action, CatchUpPlan::Action::kSnapshot);
  EXPECT_TRUE(adm.needs_catch_up());
  auto order = b.SnapshotOrder();
  ASSERT_TRUE(order.has_value());
  EXPECT_EQ(order->peer_id(), "rs1");
  EXPECT_EQ(order->host(), "127.0.0.1");
  EXPECT_EQ(order->http_port(), 9002u);
  EXPECT_NE(order->reason().find("bootstrap"), std::string::npos) << order->reason();
  EXPECT_EQ(Info("rs2")->state, ReplicationState::kNeedsSnapshot);
  EXPECT_EQ(plane_.membership().Find("rs2")->state, membership::State::kCatchingUp);

  FakeReplica c = MakeReplica("rs3");
  c.applied = 50;  // a history this log never held
  c.digest.fill(7);
  adm = Join(c);
  EXPECT_EQ(adm.plan.action, CatchUpPlan::Action::kSnapshot);
  EXPECT_TRUE(c.SnapshotOrder().has_value());
  // Nobody needing a snapshot is counted for commits or streamed to.
  auto w = Write("INSERT INTO t(v) VALUES ('x')");
  Poll();
  Deliver(a);
  EXPECT_TRUE(w->has_value());
  EXPECT_EQ(b.EntriesQueued(), 0u);
}

TEST_F(ReplicatorTest, ASnapshotWaitsForAHealthyPeer) {
  Open();
  FakeReplica b = MakeReplica("rs2");
  b.content_checksum = "bad";
  Join(b);
  EXPECT_FALSE(b.SnapshotOrder().has_value()) << "no peer yet";
  FakeReplica a = MakeReplica("rs1");
  Join(a);
  auto order = b.SnapshotOrder();
  ASSERT_TRUE(order.has_value()) << "the first healthy replica serves the snapshot";
  EXPECT_EQ(order->peer_id(), "rs1");
}

TEST_F(ReplicatorTest, AFailedSnapshotIsOrderedFromAnotherPeer) {
  Open();
  FakeReplica a = MakeReplica("rs1"), c = MakeReplica("rs3");
  Join(a);
  Join(c);
  FakeReplica b = MakeReplica("rs2");
  b.content_checksum = "bad";
  Join(b);
  auto first = b.SnapshotOrder();
  ASSERT_TRUE(first.has_value());
  const std::string other = first->peer_id() == "rs1" ? "rs3" : "rs1";
  Rejoin(b);
  auto second = b.SnapshotOrder();
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ(second->peer_id(), other) << "the peer whose copy failed was asked again";
  Rejoin(b);
  auto third = b.SnapshotOrder();
  ASSERT_TRUE(third.has_value());
  EXPECT_EQ(third->peer_id(), first->peer_id()) << "only the last failed peer is avoided";
}

TEST_F(ReplicatorTest, AFailedSnapshotIsOrderedAgainFromTheOnlyPeer) {
  Open();
  FakeReplica a = MakeReplica("rs1");
  Join(a);
  FakeReplica b = MakeReplica("rs2");
  b.content_checksum = "bad";
  Join(b);
  ASSERT_TRUE(b.SnapshotOrder().has_value());
  Rejoin(b);
  auto again = b.SnapshotOrder();
  ASSERT_TRUE(again.has_value()) << "no order at all while the only healthy peer is up";
  EXPECT_EQ(again->peer_id(), "rs1");
}

TEST_F(ReplicatorTest, AReplicaWithADifferentOutcomeIsDivergedAndRebuilt) {
  Open();
  FakeReplica a = MakeReplica("rs1"), b = MakeReplica("rs2"), c = MakeReplica("rs3");
  Join(a);
  Join(b);
  Join(c);
  c.rows = 2;  // its data differs: the same statement changed another number of rows
  auto w = Write("UPDATE t SET v = 'u'");
  Poll();
  Deliver(a);
  Deliver(c);
  Deliver(b);
  ASSERT_TRUE(w->has_value());
  EXPECT_TRUE((*w)->ok());
  EXPECT_EQ((*w)->rows_changed(), 1) << "the majority's outcome";
  EXPECT_EQ(Info("rs3")->state, ReplicationState::kDiverged);
  auto order = c.SnapshotOrder();
  ASSERT_TRUE(order.has_value());
  EXPECT_NE(order->peer_id(), "rs3");
  EXPECT_EQ(rep_->counters().divergences.Get(), 1u);
  // The next write does not wait for it.
  auto w2 = Write("INSERT INTO t(v) VALUES ('x')");
  Poll();
  Deliver(a);
  Deliver(b);
  EXPECT_TRUE(w2->has_value());
}

TEST_F(ReplicatorTest, AFullWindowMakesTheReplicaBusyUntilItAcks) {
  options_.window = {2, 1 << 20};
  Open();
  FakeReplica a = MakeReplica("rs1");
  Join(a);
  ASSERT_EQ(rep_->ReadCandidates().size(), 1u);
  EXPECT_TRUE(rep_->ReadCandidates()[0].eligible);
  for (int i = 0; i < 5; ++i) Write("INSERT INTO t(v) VALUES ('x')");
  Poll();
  EXPECT_EQ(a.EntriesQueued(), 2u);
  EXPECT_TRUE(Info("rs1")->busy);
  EXPECT_FALSE(rep_->ReadCandidates()[0].eligible);
  Deliver(a);  // acks 1..2, gets 3..4
  EXPECT_EQ(a.EntriesQueued(), 2u);
  Deliver(a);
  Deliver(a);
  EXPECT_EQ(a.applied, 5u);
  EXPECT_FALSE(Info("rs1")->busy);
  EXPECT_TRUE(rep_->ReadCandidates()[0].eligible);
  EXPECT_GE(rep_->counters().busy_events.Get(), 1u);
}

TEST_F(ReplicatorTest, AReplicaGoingDownDoesNotBlockCommits) {
  Open();
  FakeReplica a = MakeReplica("rs1"), b = MakeReplica("rs2");
  Join(a);
  Join(b);
  auto w = Write("INSERT INTO t(v) VALUES ('x')");
  Poll();
  Deliver(a);
  EXPECT_FALSE(w->has_value());
  rep_->Detach("rs2", b.link.get());
  ASSERT_TRUE(w->has_value());
  EXPECT_TRUE((*w)->ok());
  EXPECT_EQ(Info("rs2")->state, ReplicationState::kDown);
}

TEST_F(ReplicatorTest, VerifyCollectsEveryChecksumAndFlagsTheOddOne) {
  Open();
  FakeReplica a = MakeReplica("rs1"), b = MakeReplica("rs2"), c = MakeReplica("rs3");
  Join(a);
  Join(b);
  Join(c);
  auto seq = rep_->StartVerify();
  ASSERT_TRUE(seq.ok()) << seq.status().ToString();
  auto rep = rep_->Verify(*seq);
  ASSERT_TRUE(rep.has_value());
  EXPECT_FALSE(rep->complete);
  Deliver(a);
  Deliver(b);
  Deliver(c);
  rep = rep_->Verify(*seq);
  ASSERT_TRUE(rep->complete);
  EXPECT_TRUE(rep->ok);
  EXPECT_EQ(rep->expected, "c0ffee");
  ASSERT_EQ(rep->replicas.size(), 3u);
  for (const auto& r : rep->replicas) EXPECT_EQ(r.status, "OK");

  c.checksum = "bad";
  auto seq2 = rep_->StartVerify();
  ASSERT_TRUE(seq2.ok());
  Deliver(a);
  Deliver(b);
  Deliver(c);
  rep = rep_->Verify(*seq2);
  ASSERT_TRUE(rep->complete);
  EXPECT_FALSE(rep->ok);
  for (const auto& r : rep->replicas) {
    EXPECT_EQ(r.status, r.id == "rs3" ? "MISMATCH" : "OK") << r.id;
  }
  EXPECT_EQ(Info("rs3")->state, ReplicationState::kDiverged) << "a content mismatch is divergence";
}

TEST_F(ReplicatorTest, ARestartedDirectorResumesTheLogUnderANewEpoch) {
  Open();
  FakeReplica a = MakeReplica("rs1");
  Join(a);
  for (int i = 0; i < 3; ++i) Write("INSERT INTO t(v) VALUES ('x')");
  Poll();
  Deliver(a);
  const uint64_t epoch = rep_->GetStatus().epoch;
  rep_->Stop();
  options_.schema_db.clear();  // the log has its bootstrap now
  Open();
  EXPECT_EQ(rep_->last_seq(), 3u);
  EXPECT_GT(rep_->GetStatus().epoch, epoch);
  // The replica returns at the head: streamed, no catch-up, no snapshot.
  a.link = std::make_shared<FakeLink>();
  a.incarnation++;
  Admission adm = Join(a);
  EXPECT_EQ(adm.plan.action, CatchUpPlan::Action::kStream);
  EXPECT_FALSE(adm.needs_catch_up());
  // The agreed digest at seq 3 survived the restart: a replica claiming another history at
  // the same seq is sent to a snapshot.
  FakeReplica liar = MakeReplica("rs9");
  liar.applied = 3;
  liar.digest.fill(9);
  Admission bad = Join(liar);
  EXPECT_EQ(bad.plan.action, CatchUpPlan::Action::kSnapshot);
  EXPECT_NE(bad.plan.reason.find("digest at seq 3"), std::string::npos) << bad.plan.reason;
  auto w = Write("INSERT INTO t(v) VALUES ('after')");
  Poll();
  Deliver(a);
  ASSERT_TRUE(w->has_value());
  EXPECT_EQ((*w)->seq(), 4u);
  EXPECT_EQ((*w)->epoch(), rep_->GetStatus().epoch);
}

// The update queue's byte bound (update_queue_bytes): a write whose SQL and parameters would take
// the waiting bytes past it is refused as overloaded, counted, and never sequenced; the bytes
// are given back when the writes are decided.
TEST_F(ReplicatorTest, UpdateQueueBytesBoundRefusesWithOverloadedAndSequencesNothing) {
  options_.update_queue_bytes = 3000;
  Open();
  FakeReplica a = MakeReplica("rs1");
  Join(a);
  const std::string sql = "INSERT INTO t(v) VALUES (?)";
  const uint64_t one = sql.size() + 1000 + 8;  // as Submit counts a parameter
  auto w1 = Write(sql, {replication::Value::Blob(std::string(1000, 'a'))});
  auto w2 = Write(sql, {replication::Value::Blob(std::string(1000, 'b'))});
  ASSERT_FALSE(w2->has_value());
  EXPECT_EQ(rep_->GetStatus().update_queue_bytes, 2 * one);
  const uint64_t overloaded = rep_->counters().writes_overloaded.Get();
  auto w3 = Write(sql, {replication::Value::Blob(std::string(1000, 'c'))});
  ASSERT_TRUE(w3->has_value());
  EXPECT_EQ((*w3)->code(), kWriteOverloaded);
  EXPECT_EQ((*w3)->error().rfind("overloaded: update queue full (" + std::to_string(2 * one) +
                                     " bytes of SQL and parameters waiting, the bound is "
                                     "update_queue_bytes 3000)",
                                 0),
            0u)
      << (*w3)->error();
  EXPECT_EQ(rep_->counters().writes_overloaded.Get(), overloaded + 1);
  Poll();
  EXPECT_EQ(rep_->last_seq(), 2u) << "only the two accepted writes were sequenced";
  EXPECT_EQ(rep_->GetStatus().update_queue_bytes, 2 * one) << "sequenced, waiting for the ack";
  Deliver(a);
  ASSERT_TRUE(w1->has_value() && w2->has_value());
  EXPECT_TRUE((*w1)->ok() && (*w2)->ok()) << (*w1)->error() << (*w2)->error();
  EXPECT_EQ(rep_->GetStatus().update_queue_bytes, 0u);
  auto w4 = Write(sql, {replication::Value::Blob(std::string(2000, 'd'))});
  EXPECT_FALSE(w4->has_value()) << "room again once the first two were decided";
}

}  // namespace
}  // namespace vsc::director
