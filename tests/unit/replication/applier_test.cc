#include "replication/applier.h"

#include <gtest/gtest.h>

#include "common/random.h"
#include "replication/digest.h"
#include "testing/fake_executor.h"

namespace vsc::replication {
namespace {

using vsc::testing::FakeDisk;
using vsc::testing::FakeExecutor;

Entry W(uint64_t seq, const std::string& sql = "INSERT INTO t VALUES(1)") {
  Entry e;
  e.epoch = 1;
  e.seq = seq;
  e.ts_micros = 1000 + static_cast<int64_t>(seq);
  e.statements = {{sql, {}}};
  return e;
}

std::vector<Entry> Writes(uint64_t from, uint64_t to) {
  std::vector<Entry> out;
  for (uint64_t s = from; s <= to; ++s) out.push_back(W(s));
  return out;
}

std::vector<uint64_t> Seqs(uint64_t from, uint64_t to) {
  std::vector<uint64_t> out;
  for (uint64_t s = from; s <= to; ++s) out.push_back(s);
  return out;
}

struct Replica {
  std::shared_ptr<FakeDisk> disk = std::make_shared<FakeDisk>();
  FakeExecutor* fake = nullptr;  // owned by the applier
  std::unique_ptr<Applier> applier;

  // A (re)start: a new executor and applier over the same disk.
  void Start() {
    auto exec = std::make_unique<FakeExecutor>(disk);
    fake = exec.get();
    auto a = Applier::Create(std::move(exec));
    ASSERT_TRUE(a.ok()) << a.status().ToString();
    applier = std::move(*a);
  }
};

// The digest after applying `entries` one by one with the fake's semantics.
Digest Expected(const std::vector<Entry>& entries) {
  Digest d = ZeroDigest();
  for (const Entry& e : entries) {
    EntryResult r;
    r.seq = e.seq;
    r.rows_changed = 1;
    d = NextDigest(d, e, r);
  }
  return d;
}

TEST(ApplierTest, AppliesABatchInOneTransaction) {
  Replica r;
  r.Start();
  auto res = r.applier->Apply(Writes(1, 3));
  ASSERT_TRUE(res.ok()) << res.status().ToString();
  ASSERT_EQ(res->size(), 3u);
  EXPECT_EQ((*res)[2].seq, 3u);
  EXPECT_EQ(r.fake->calls(), (std::vector<std::string>{"load", "begin", "execute 1", "execute 2",
                                                       "execute 3", "commit 3"}));
  EXPECT_EQ(r.applier->state().applied_seq, 3u);
  EXPECT_EQ(r.applier->state().epoch, 1u);
  EXPECT_EQ(r.applier->state().digest, Expected(Writes(1, 3)));
  EXPECT_EQ(r.disk->state.digest, r.applier->state().digest);  // stored in the same commit
  EXPECT_EQ(r.disk->commits, 1u);
}

TEST(ApplierTest, AFailingEntryIsItsOwnResultAndDoesNotStopTheBatch) {
  Replica r;
  r.Start();
  std::vector<Entry> batch = {W(1), W(2, "FAIL please"), W(3)};
  auto res = r.applier->Apply(batch);
  ASSERT_TRUE(res.ok());
  EXPECT_EQ((*res)[1].code, 19);
  EXPECT_EQ((*res)[1].rows_changed, 0);
  EXPECT_EQ((*res)[2].code, 0);
  EXPECT_EQ(r.disk->applied, (std::vector<uint64_t>{1, 3}));
  EXPECT_EQ(r.applier->state().applied_seq, 3u);
}

TEST(ApplierTest, CrashBeforeCommitLeavesTheStateAndReapplyWorks) {
  Replica r;
  r.Start();
  ASSERT_TRUE(r.applier->Apply(Writes(1, 2)).ok());
  r.fake->CrashBeforeCommit();
  auto res = r.applier->Apply(Writes(3, 6));
  EXPECT_EQ(res.status().code(), Code::kIo);
  EXPECT_EQ(r.applier->state().applied_seq, 2u);
  EXPECT_EQ(r.disk->state.applied_seq, 2u);
  r.Start();  // the process restarts
  EXPECT_EQ(r.applier->state().applied_seq, 2u);
  auto again = r.applier->Apply(Writes(3, 6));
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->size(), 4u);
  EXPECT_EQ(r.disk->applied, Seqs(1, 6));
  EXPECT_EQ(r.applier->state().digest, Expected(Writes(1, 6)));
}

TEST(ApplierTest, CrashAfterCommitAdvancesTheStateAndRedeliveryIsSkipped) {
  Replica r;
  r.Start();
  r.fake->CrashAfterCommit();
  EXPECT_EQ(r.applier->Apply(Writes(1, 4)).status().code(), Code::kIo);
  // The same applier trusts the stored state rather than its guess...
  EXPECT_EQ(r.applier->state().applied_seq, 4u);
  // ...and so does a restarted one; the redelivered entries are duplicates.
  r.Start();
  EXPECT_EQ(r.applier->state().applied_seq, 4u);
  auto res = r.applier->Apply(Writes(1, 5));
  ASSERT_TRUE(res.ok());
  ASSERT_EQ(res->size(), 1u);
  EXPECT_EQ((*res)[0].seq, 5u);
  EXPECT_EQ(r.disk->applied, Seqs(1, 5));  // each exactly once
  EXPECT_EQ(r.applier->state().digest, Expected(Writes(1, 5)));
}

TEST(ApplierTest, DuplicatesAreSkippedAndAGapIsRefused) {
  Replica r;
  r.Start();
  ASSERT_TRUE(r.applier->Apply(Writes(1, 3)).ok());
  auto dup = r.applier->Apply(Writes(2, 3));
  ASSERT_TRUE(dup.ok());
  EXPECT_TRUE(dup->empty());
  const size_t calls = r.fake->calls().size();
  auto gap = r.applier->Apply(Writes(5, 6));
  EXPECT_EQ(gap.status().code(), Code::kFailedPrecondition);
  EXPECT_EQ(gap.status().message(),
            "replica: entry seq 5 does not follow 3; send the entries from seq 4 in order");
  std::vector<Entry> holey = {W(4), W(6)};
  EXPECT_EQ(r.applier->Apply(holey).status().code(), Code::kFailedPrecondition);
  EXPECT_EQ(r.fake->calls().size(), calls);  // refused before touching the database
  EXPECT_EQ(r.applier->state().applied_seq, 3u);
}

TEST(ApplierTest, ExecutorErrorMidBatchAbandonsTheWholeBatch) {
  Replica r;
  r.Start();
  ASSERT_TRUE(r.applier->Apply(Writes(1, 2)).ok());
  const ReplicaState before = r.applier->state();
  r.fake->FailExecuteAt(5);
  auto res = r.applier->Apply(Writes(3, 8));
  EXPECT_EQ(res.status().code(), Code::kIo);
  EXPECT_EQ(r.fake->calls().back(), "rollback");
  EXPECT_EQ(r.applier->state().applied_seq, before.applied_seq);
  EXPECT_EQ(r.applier->state().digest, before.digest);
  EXPECT_EQ(r.disk->applied, Seqs(1, 2));
  EXPECT_FALSE(r.fake->in_transaction());
  ASSERT_TRUE(r.applier->Apply(Writes(3, 8)).ok());
  EXPECT_EQ(r.disk->applied, Seqs(1, 8));

  r.fake->FailBegin();
  EXPECT_EQ(r.applier->Apply(Writes(9, 9)).status().code(), Code::kIo);
  EXPECT_EQ(r.applier->state().applied_seq, 8u);

  auto disk = std::make_shared<FakeDisk>();
  auto exec = std::make_unique<FakeExecutor>(disk);
  exec->FailLoadState();
  EXPECT_EQ(Applier::Create(std::move(exec)).status().code(), Code::kIo);
}

// Property: whatever the delivery (duplicates, reordering, crashes before and after commit,
// executor errors), a replica whose caller re-sends from applied_seq + 1 ends with every entry
// applied exactly once and the same digest as a replica that got everything in one batch.
TEST(ApplierTest, RandomDeliveryAndFaultsConvergeToTheSameState) {
  const uint64_t n = 200;
  std::vector<Entry> all = Writes(1, n);
  for (uint64_t s = 7; s <= n; s += 13) all[s - 1] = W(s, "FAIL sometimes");
  Replica ref;
  ref.Start();
  ASSERT_TRUE(ref.applier->Apply(all).ok());

  for (uint64_t seed = 1; seed <= 20; ++seed) {
    Random rng(seed);
    Replica r;
    r.Start();
    int faults = 0;
    while (r.applier->state().applied_seq < n) {
      // The caller's view may be stale: start a little before or after applied_seq + 1.
      const uint64_t applied = r.applier->state().applied_seq;
      uint64_t from = applied + 1;
      const uint64_t jitter = rng.Uniform(4);
      if (rng.Uniform(2) == 0)
        from = from > jitter ? from - jitter : 1;
      else
        from = std::min(n, from + jitter);
      const uint64_t to = std::min(n, from + rng.Uniform(20));
      std::vector<Entry> batch(all.begin() + (from - 1), all.begin() + to);
      switch (rng.Uniform(8)) {
        case 0:
          r.fake->CrashBeforeCommit();
          ++faults;
          break;
        case 1:
          r.fake->CrashAfterCommit();
          ++faults;
          break;
        case 2:
          r.fake->FailExecuteAt(from + rng.Uniform(to - from + 1));
          ++faults;
          break;
        default:
          break;
      }
      auto res = r.applier->Apply(batch);
      if (!res.ok() && rng.Uniform(2) == 0) r.Start();  // sometimes the process restarts
    }
    EXPECT_GT(faults, 0);
    EXPECT_EQ(r.applier->state().digest, ref.applier->state().digest) << "seed " << seed;
    EXPECT_EQ(r.disk->applied, ref.disk->applied) << "seed " << seed;
  }
}

// Fencing (issue 11): a message sent under an epoch older than the newest seen is refused
// whole; the newest epoch is stored with applied_seq, so a restart keeps it.
TEST(ApplierTest, AMessageFromAnOlderEpochIsRefusedAndTheFenceSurvivesARestart) {
  Replica r;
  r.Start();
  ASSERT_TRUE(r.applier->Apply(Writes(1, 2), 5).ok());
  EXPECT_EQ(r.applier->state().fence_epoch, 5u);
  EXPECT_TRUE(r.applier->Admits(5));
  EXPECT_FALSE(r.applier->Admits(4));
  auto old = r.applier->Apply(Writes(3, 3), 4);
  ASSERT_FALSE(old.ok());
  EXPECT_EQ(old.status().code(), Code::kFailedPrecondition);
  EXPECT_NE(old.status().message().find("older than epoch 5"), std::string::npos)
      << old.status().message();
  EXPECT_EQ(r.applier->state().applied_seq, 2u) << "nothing of it applied";
  // A newer director replays seq 3 under its own epoch; the fence moves with the entry.
  ASSERT_TRUE(r.applier->Apply(Writes(3, 3), 9).ok());
  EXPECT_EQ(r.applier->state().fence_epoch, 9u);
  // Duplicates alone still move the fence (durably, in a transaction of their own).
  ASSERT_TRUE(r.applier->Apply(Writes(2, 3), 11).ok());
  EXPECT_EQ(r.applier->state().fence_epoch, 11u);
  r.Start();
  EXPECT_EQ(r.applier->state().fence_epoch, 11u);
  EXPECT_EQ(r.applier->state().applied_seq, 3u);
  EXPECT_FALSE(r.applier->Apply(Writes(4, 4), 9).ok()) << "refused after the restart too";
  ASSERT_TRUE(r.applier->RaiseFence(7).ok());
  EXPECT_EQ(r.applier->state().fence_epoch, 11u) << "RaiseFence never lowers it";
  ASSERT_TRUE(r.applier->RaiseFence(12).ok());
  r.Start();
  EXPECT_EQ(r.applier->state().fence_epoch, 12u);
}

}  // namespace
}  // namespace vsc::replication
