#include "replication/log.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "replication/digest.h"
#include "replication/entry_codec.h"
#include "support/temp_dir.h"
#include "unit/replication/random_entries.h"

namespace vsc::replication {
namespace {

using test_support::TempDir;

// The entry for `seq`, a pure function of seq (so a reopened log can be checked entry by entry).
Entry EntryFor(uint64_t seq, uint64_t epoch = 1) {
  Random rng(seq * 7919);
  Entry e = testing_util::RandomEntry(rng, seq);
  e.epoch = epoch;
  e.ts_micros = 1'000'000 + static_cast<int64_t>(seq);
  return e;
}

std::vector<Entry> Range(uint64_t from, uint64_t to) {
  std::vector<Entry> out;
  for (uint64_t s = from; s <= to; ++s) out.push_back(EntryFor(s));
  return out;
}

std::unique_ptr<ReplicationLog> MustOpen(const std::string& path, LogOptions o = {}) {
  auto log = ReplicationLog::Open(path, o);
  EXPECT_TRUE(log.ok()) << log.status().ToString();
  return log.ok() ? std::move(*log) : nullptr;
}

TEST(LogTest, AppendReadAndReopenResumeThePosition) {
  TempDir dir;
  const std::string path = dir.File("log.db");
  {
    auto log = MustOpen(path);
    EXPECT_EQ(log->epoch(), 1u);
    EXPECT_EQ(log->last_seq(), 0u);
    EXPECT_EQ(log->first_seq(), 1u);
    EXPECT_EQ(log->Read(1, 10, 1 << 20)->size(), 0u);
    ASSERT_TRUE(log->Append(Range(1, 1)).ok());
    ASSERT_TRUE(log->Append(Range(2, 50)).ok());
    EXPECT_EQ(log->last_seq(), 50u);
    EXPECT_EQ(log->last_ts_micros(), 1'000'050);
    auto all = log->Read(1, 1000, 1 << 20);
    ASSERT_TRUE(all.ok());
    EXPECT_EQ(*all, Range(1, 50));
    EXPECT_EQ(*log->Read(10, 5, 1 << 20), Range(10, 14));
    // The byte budget stops early but always returns at least one entry.
    EXPECT_EQ(log->Read(10, 100, 1)->size(), 1u);
    EXPECT_EQ(log->Read(51, 10, 1 << 20)->size(), 0u);
    Status gap = log->Append(Range(52, 52));
    EXPECT_EQ(gap.code(), Code::kFailedPrecondition);
    EXPECT_EQ(gap.message(), "replication log: append of seq 52 but the next seq is 51");
  }
  auto log = MustOpen(path);
  EXPECT_EQ(log->epoch(), 2u);  // every Open is a new director incarnation
  EXPECT_EQ(log->last_seq(), 50u);
  EXPECT_EQ(log->first_seq(), 1u);
  EXPECT_EQ(log->last_ts_micros(), 1'000'050);
  EXPECT_EQ(*log->Read(1, 1000, 1 << 20), Range(1, 50));
  EXPECT_EQ(MustOpen(path + "x")->epoch(), 1u);
}

TEST(LogTest, RetentionByEntriesAndBytesKeepsPositionAndSchema) {
  TempDir dir;
  const std::string path = dir.File("log.db");
  LogOptions o;
  o.retain_entries = 30;
  {
    auto log = MustOpen(path, o);
    ASSERT_TRUE(log->SetBootstrap({"CREATE TABLE t(a)"}, "abc").ok());
    EXPECT_EQ(log->SetBootstrap({}, "x").code(), Code::kFailedPrecondition);
    std::vector<Entry> es = Range(1, 100);
    es[4].statements = {{"CREATE TABLE u(x)", {}}, {"INSERT INTO u VALUES(1)", {}}};
    es[60].statements = {{"  alter TABLE u ADD y", {}}};
    ASSERT_TRUE(log->Append(es).ok());
    for (uint64_t s = 1; s <= 100; ++s) {
      Digest d{};
      d[0] = static_cast<uint8_t>(s);
      ASSERT_TRUE(log->SetAgreedDigest(s, d).ok());
    }
    EXPECT_EQ(log->SetAgreedDigest(101, {}).code(), Code::kInvalidArgument);
    auto trimmed = log->Trim();
    ASSERT_TRUE(trimmed.ok()) << trimmed.status().ToString();
    EXPECT_EQ(*trimmed, 70u);
    EXPECT_EQ(log->first_seq(), 71u);
    auto gone = log->Read(70, 10, 1 << 20);
    EXPECT_EQ(gone.status().code(), Code::kNotFound);
    EXPECT_EQ(gone.status().message(),
              "replication log: seq 70 was trimmed (the oldest entry held is 71); copy a "
              "snapshot instead");
    EXPECT_EQ(log->AgreedDigest(70).status().code(), Code::kNotFound);
    EXPECT_EQ((*log->AgreedDigest(71))[0], 71);
    EXPECT_EQ(*log->Trim(), 0u);
  }
  o.retain_bytes = 0;  // keep only the newest entry
  auto log = MustOpen(path, o);
  EXPECT_EQ(log->first_seq(), 71u);
  EXPECT_EQ(*log->Trim(), 29u);
  EXPECT_EQ(log->first_seq(), 100u);
  EXPECT_EQ(log->last_seq(), 100u);
  EXPECT_EQ(*log->Read(100, 10, 0), Range(100, 100));
  EXPECT_EQ(*log->Schema(), (std::vector<std::string>{"CREATE TABLE t(a)", "CREATE TABLE u(x)",
                                                      "  alter TABLE u ADD y"}));
  EXPECT_EQ(log->BootstrapChecksum(), "abc");
  ASSERT_TRUE(log->Append(Range(101, 101)).ok());
  EXPECT_EQ(*log->Read(100, 10, 1 << 20), Range(100, 101));
}

TEST(LogTest, ByteRetentionTrimsOldestFirst) {
  TempDir dir;
  LogOptions o;
  o.retain_bytes = 0;
  auto log = MustOpen(dir.File("log.db"), o);
  ASSERT_TRUE(log->Append(Range(1, 40)).ok());
  EXPECT_EQ(*log->Trim(), 39u);
  EXPECT_EQ(log->first_seq(), 40u);
}

TEST(LogTest, ByteRetentionKeepsTheNewestEntriesThatFit) {
  TempDir dir;
  const std::string path = dir.File("log.db");
  std::vector<Entry> es = Range(1, 40);
  LogOptions o;
  o.retain_bytes = 0;
  for (uint64_t s = 31; s <= 40; ++s)
    o.retain_bytes += EncodeStatements(es[s - 1].statements).size();
  auto log = MustOpen(path, o);
  ASSERT_TRUE(log->Append(es).ok());
  EXPECT_EQ(*log->Trim(), 30u);
  EXPECT_EQ(log->first_seq(), 31u);
  EXPECT_EQ(*log->Read(31, 100, 1 << 20), Range(31, 40));
}

TEST(LogTest, ReaderSeesTheOwnersAppendsAndCannotWrite) {
  TempDir dir;
  const std::string path = dir.File("log.db");
  EXPECT_EQ(ReplicationLog::OpenReader(path).status().code(), Code::kNotFound);
  auto log = MustOpen(path);
  auto reader = ReplicationLog::OpenReader(path);
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  EXPECT_EQ((*reader)->last_seq(), 0u);
  ASSERT_TRUE(log->Append(Range(1, 5)).ok());
  EXPECT_EQ((*reader)->last_seq(), 5u);
  EXPECT_EQ((*reader)->epoch(), 1u);
  EXPECT_EQ(*(*reader)->Read(2, 10, 1 << 20), Range(2, 5));
  EXPECT_EQ((*reader)->Append(Range(6, 6)).code(), Code::kFailedPrecondition);
  EXPECT_EQ((*reader)->Trim().status().code(), Code::kFailedPrecondition);
}

// A director killed (SIGKILL) in the middle of an append loop: after reopening, every seq from
// the first to the last is present and intact, and everything acknowledged is there.
TEST(LogTest, KilledMidAppendLosesNothingAcknowledgedAndLeavesNoGap) {
  TempDir dir;
  const std::string path = dir.File("log.db");
  for (int round = 0; round < 3; ++round) {
    int fds[2];
    ASSERT_EQ(::pipe(fds), 0);
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      ::close(fds[0]);
      auto log = ReplicationLog::Open(path, {});
      if (!log.ok()) ::_exit(2);
      uint64_t next = (*log)->last_seq() + 1;
      Random rng(next);
      for (;;) {
        const uint64_t n = 1 + rng.Uniform(8);
        if (!(*log)->Append(Range(next, next + n - 1)).ok()) ::_exit(3);
        next += n;
        const uint64_t acked = next - 1;
        if (::write(fds[1], &acked, sizeof acked) != sizeof acked) ::_exit(4);
      }
    }
    ::close(fds[1]);
    uint64_t acked = 0;
    for (int k = 0; k < 100 + round * 37; ++k) {
      ASSERT_EQ(::read(fds[0], &acked, sizeof acked), static_cast<ssize_t>(sizeof acked));
    }
    ::kill(child, SIGKILL);
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    ::close(fds[0]);
    ASSERT_TRUE(WIFSIGNALED(status)) << "child exited with " << WEXITSTATUS(status);

    auto log = MustOpen(path);
    EXPECT_EQ(log->epoch(), static_cast<uint64_t>(2 * round + 2));
    EXPECT_GE(log->last_seq(), acked);
    auto all = log->Read(1, 1'000'000, 1ull << 40);
    ASSERT_TRUE(all.ok()) << all.status().ToString();
    ASSERT_EQ(all->size(), log->last_seq());
    for (uint64_t s = 1; s <= all->size(); ++s) ASSERT_EQ((*all)[s - 1], EntryFor(s)) << s;
  }
}

// Under an etcd lease (issue 11) the epoch is not a local count: Open leaves it as it was and
// AdoptEpoch sets it, only upwards, durably.
TEST(LogTest, UnderALeaseTheEpochIsAdoptedNotBumpedAndNeverGoesBack) {
  TempDir dir;
  const std::string path = dir.File("log.db");
  { EXPECT_EQ(MustOpen(path)->epoch(), 1u); }
  LogOptions lease;
  lease.bump_epoch = false;
  auto log = MustOpen(path, lease);
  ASSERT_NE(log, nullptr);
  EXPECT_EQ(log->epoch(), 1u) << "not bumped";
  ASSERT_TRUE(log->AdoptEpoch((uint64_t{1} << 32) + 42).ok());
  EXPECT_EQ(log->epoch(), (uint64_t{1} << 32) + 42);
  ASSERT_TRUE(log->Append(std::vector<Entry>{EntryFor(1, log->epoch())}).ok());
  for (uint64_t back : {uint64_t{(uint64_t{1} << 32) + 42}, uint64_t{7}}) {
    Status s = log->AdoptEpoch(back);
    EXPECT_EQ(s.code(), Code::kFailedPrecondition) << back;
    EXPECT_NE(s.message().find("is not above the log's epoch"), std::string::npos);
  }
  log.reset();
  log = MustOpen(path, lease);
  EXPECT_EQ(log->epoch(), (uint64_t{1} << 32) + 42) << "durable";
  log.reset();
  EXPECT_EQ(MustOpen(path)->epoch(), (uint64_t{1} << 32) + 43) << "without etcd: bumped again";
}

}  // namespace
}  // namespace vsc::replication
