#include "director/catch_up.h"

#include <gtest/gtest.h>

#include "replication/digest.h"

namespace vsc::director {
namespace {

using replication::Digest;

Digest D(uint8_t b) {
  Digest d{};
  d.fill(b);
  return d;
}

TEST(CatchUpTest, FreshReplicaWithTheBootstrapContentStreamsFromTheStart) {
  LogPosition log{1, 0, "boot"};
  CatchUpPlan p = DecideCatchUp({0, replication::ZeroDigest(), "boot"}, log, std::nullopt);
  EXPECT_EQ(p.action, CatchUpPlan::Action::kStream);
  EXPECT_EQ(p.from_seq, 1u);
  EXPECT_FALSE(p.needs_catch_up);

  log.last_seq = 5;
  p = DecideCatchUp({0, replication::ZeroDigest(), "boot"}, log, std::nullopt);
  EXPECT_EQ(p.action, CatchUpPlan::Action::kStream);
  EXPECT_TRUE(p.needs_catch_up);
}

TEST(CatchUpTest, EachSnapshotRuleSaysWhy) {
  LogPosition log{4, 10, "boot"};
  auto p = DecideCatchUp({0, std::nullopt, "other"}, log, std::nullopt);
  EXPECT_EQ(p.action, CatchUpPlan::Action::kSnapshot);
  EXPECT_NE(p.reason.find("differs from the bootstrap"), std::string::npos) << p.reason;

  p = DecideCatchUp({11, D(1), ""}, log, std::nullopt);
  EXPECT_EQ(p.action, CatchUpPlan::Action::kSnapshot);
  EXPECT_NE(p.reason.find("beyond the log's last seq 10"), std::string::npos) << p.reason;

  p = DecideCatchUp({7, D(1), ""}, log, D(2));
  EXPECT_EQ(p.action, CatchUpPlan::Action::kSnapshot);
  EXPECT_NE(p.reason.find("digest at seq 7"), std::string::npos) << p.reason;

  p = DecideCatchUp({2, D(1), ""}, log, std::nullopt);
  EXPECT_EQ(p.action, CatchUpPlan::Action::kSnapshot);
  EXPECT_NE(p.reason.find("no longer holds seq 3"), std::string::npos) << p.reason;

  // Exactly at the trim boundary the log still holds what it needs.
  p = DecideCatchUp({3, D(1), ""}, log, D(1));
  EXPECT_EQ(p.action, CatchUpPlan::Action::kStream);
  EXPECT_EQ(p.from_seq, 4u);
  EXPECT_TRUE(p.needs_catch_up);
}

// Every combination of small positions: the plan streams exactly when no rule is broken, and a
// stream starts right after the replica's position, inside what the log holds.
TEST(CatchUpTest, PropertyStreamExactlyWhenTheLogCoversAVerifiedPosition) {
  int streams = 0, snapshots = 0;
  for (uint64_t first = 1; first <= 6; ++first) {
    for (uint64_t last = first - 1; last <= 8; ++last) {
      for (uint64_t applied = 0; applied <= 10; ++applied) {
        for (int digest_case = 0; digest_case < 4; ++digest_case) {
          for (int checksum_ok = 0; checksum_ok < 2; ++checksum_ok) {
            ReplicaPosition pos;
            pos.applied_seq = applied;
            pos.content_checksum = checksum_ok ? "boot" : "x";
            std::optional<Digest> agreed;
            switch (digest_case) {
              case 0: pos.digest = D(1); break;                   // unknown agreed digest
              case 1: pos.digest = D(1); agreed = D(1); break;    // matches
              case 2: pos.digest = D(1); agreed = D(2); break;    // differs
              case 3: pos.digest = std::nullopt; agreed = D(2); break;  // missing
            }
            LogPosition log{first, last, "boot"};
            CatchUpPlan p = DecideCatchUp(pos, log, agreed);
            const bool ok = (applied > 0 || checksum_ok) && applied <= last &&
                            (digest_case == 0 || digest_case == 1) && applied + 1 >= first;
            ASSERT_EQ(p.action == CatchUpPlan::Action::kStream, ok)
                << "first " << first << " last " << last << " applied " << applied
                << " digest " << digest_case << " checksum " << checksum_ok << ": " << p.reason;
            if (ok) {
              ++streams;
              EXPECT_EQ(p.from_seq, applied + 1);
              EXPECT_EQ(p.needs_catch_up, applied < last);
              EXPECT_TRUE(p.reason.empty());
            } else {
              ++snapshots;
              EXPECT_FALSE(p.reason.empty());
            }
          }
        }
      }
    }
  }
  EXPECT_GT(streams, 50);
  EXPECT_GT(snapshots, 50);
}

}  // namespace
}  // namespace vsc::director
