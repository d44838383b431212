// A replica fences off deposed directors (issue 11): a Replicate or InstallSnapshot sent under
// an epoch older than the newest it has seen is refused, counted and answered with that epoch;
// the fence is stored with applied_seq and survives a restart and a snapshot install.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <future>

#include "realserver/replica.h"
#include "realserver/snapshot.h"
#include "replica_fixture.h"
#include "replication/replica_store.h"

namespace vsc::realserver {
namespace {

using namespace std::chrono_literals;

proto::Replicate Under(uint64_t epoch, proto::Replicate r) {
  r.set_epoch(epoch);
  return r;
}

TEST_F(ReplicaTest, AnOlderEpochIsRefusedCountedAndNamedAndTheFenceSurvivesARestart) {
  const std::string path = dir_.File("a.db");
  {
    auto r = OpenReplica(path);
    StartAndWait(*r);
    r->Submit(1, Under(9, Range(1, 5)));
    WaitForAck(5);
    EXPECT_EQ(r->position().fence_epoch, 9u);
    r->Submit(1, Under(7, Range(6, 8)));  // the deposed director's next writes
    auto acks = WaitForAck(0, /*error=*/true);
    const proto::ReplicaAck& refused = acks.back().ack;
    EXPECT_EQ(refused.fence_epoch(), 9u);
    EXPECT_EQ(refused.applied_seq(), 5u);
    EXPECT_EQ(refused.outcomes_size(), 0);
    EXPECT_NE(refused.error().find("epoch 7, older than epoch 9"), std::string::npos)
        << refused.error();
    EXPECT_EQ(r->applied_seq(), 5u);
    EXPECT_EQ(r->position().fenced_refusals, 1u);
  }
  acks_.clear();
  ready_ = false;
  auto again = OpenReplica(path);
  EXPECT_EQ(again->position().fence_epoch, 9u) << "stored with applied_seq";
  StartAndWait(*again);
  again->Submit(2, Under(7, Range(6, 8)));
  auto acks = WaitForAck(0, /*error=*/true);
  EXPECT_EQ(acks.back().ack.fence_epoch(), 9u);
  EXPECT_EQ(again->applied_seq(), 5u);
  // The newer director streams on; a newer one still moves the fence up.
  again->Submit(2, Under(10, Range(6, 8)));
  WaitForAck(8);
  EXPECT_EQ(again->position().fence_epoch, 10u);
  EXPECT_EQ(again->position().digest, ApplyDirectly(dir_.File("ref.db"), 8).digest);
}

TEST_F(ReplicaTest, ASnapshotOrderFromAnOlderEpochIsRefusedAndAnInstallKeepsTheFence) {
  const std::string token = SnapshotToken(TestKey());
  const std::string peer_path = dir_.File("peer.db");
  ApplyDirectly(peer_path, 20);  // the copy's own fence is 0
  SnapshotPeer peer(peer_path, token);
  auto r = OpenReplica(dir_.File("a.db"), token);
  StartAndWait(*r);
  r->Submit(1, Under(9, Range(1, 3)));
  WaitForAck(3);
  auto install = [&](uint64_t epoch) {
    std::promise<Status> done;
    SnapshotSource src{"peer", "127.0.0.1", peer.port(), "test", epoch};
    r->InstallSnapshot(src, [&done](Status s) { done.set_value(s); });
    auto f = done.get_future();
    EXPECT_EQ(f.wait_for(20s), std::future_status::ready);
    return f.get();
  };
  Status old = install(8);
  EXPECT_EQ(old.code(), Code::kFailedPrecondition);
  EXPECT_NE(old.message().find("epoch 8, older than epoch 9"), std::string::npos) << old.message();
  EXPECT_EQ(r->applied_seq(), 3u);
  EXPECT_EQ(r->position().fenced_refusals, 1u);
  {
    std::lock_guard lock(mu_);
    EXPECT_TRUE(events_.empty()) << "refused before anything was fetched";
  }
  Status ok = install(9);
  ASSERT_TRUE(ok.ok()) << ok.ToString();
  EXPECT_EQ(r->applied_seq(), 20u);
  EXPECT_EQ(r->position().fence_epoch, 9u) << "not the copy's 0";
  EXPECT_EQ(replication::ReadReplicaState(dir_.File("a.db"))->applied_seq, 20u);
}

// A replica file written before issue 11 has no fence column: it is added, fencing nothing.
TEST_F(ReplicaTest, AReplicaFileWithoutTheFenceColumnOpensAtItsPosition) {
  const std::string path = dir_.File("old.db");
  ApplyDirectly(path, 4);
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "ALTER TABLE _vsc_replica DROP COLUMN fence_epoch", nullptr, nullptr,
                         nullptr),
            SQLITE_OK)
      << sqlite3_errmsg(db);
  sqlite3_close(db);
  auto r = OpenReplica(path);
  EXPECT_EQ(r->applied_seq(), 4u);
  EXPECT_EQ(r->position().fence_epoch, 0u);
  StartAndWait(*r);
  r->Submit(1, Under(3, Range(5, 6)));
  WaitForAck(6);
  EXPECT_EQ(r->position().fence_epoch, 3u);
}

}  // namespace
}  // namespace vsc::realserver
