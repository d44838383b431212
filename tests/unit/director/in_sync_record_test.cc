// The in-sync record's value, the promotion's wait, and the ledger's rule (in_sync_record.h).
#include "director/in_sync_record.h"

#include <gtest/gtest.h>

namespace vsc::director {
namespace {

TEST(InSyncRecordTest, EncodesAndParsesBack) {
  InSyncRecord r{(uint64_t{1} << 32) + 17, 12345, {"rs2", "rs1"}};
  const std::string text = EncodeInSyncRecord(r);
  EXPECT_EQ(text, R"({"epoch":4294967313,"in_sync":["rs1","rs2"],"seq":12345})");
  auto back = ParseInSyncRecord(text);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, r);
  EXPECT_EQ(JoinReplicaSet(r.members), "rs1, rs2");
}

TEST(InSyncRecordTest, ABadValueIsRefusedNamingWhatIsWrong) {
  for (const auto& [text, what] : std::vector<std::pair<std::string, std::string>>{
           {"", "not a JSON object"},
           {"[1]", "not a JSON object"},
           {R"({"seq":1,"in_sync":["a"]})", "\"epoch\""},
           {R"({"epoch":-1,"seq":1,"in_sync":["a"]})", "\"epoch\""},
           {R"({"epoch":1,"seq":"1","in_sync":["a"]})", "\"seq\""},
           {R"({"epoch":1,"seq":1})", "\"in_sync\" array"},
           {R"({"epoch":1,"seq":1,"in_sync":[7]})", "not a server id"},
           {R"({"epoch":1,"seq":1,"in_sync":[""]})", "not a server id"},
           {R"({"epoch":1,"seq":1,"in_sync":[]})", "names no replica"},
       }) {
    auto r = ParseInSyncRecord(text);
    ASSERT_FALSE(r.ok()) << text;
    EXPECT_EQ(r.status().code(), Code::kDataLoss);
    EXPECT_NE(r.status().message().find(what), std::string::npos)
        << text << ": " << r.status().message();
  }
}

TEST(InSyncRecordTest, APromotionWaitsUntilAMemberOfTheLastSetRegistered) {
  EXPECT_FALSE(PromotionWaitsFor(std::nullopt, {}).has_value()) << "no record: nothing to wait for";
  InSyncRecord last{5, 9, {"rs2", "rs3"}};
  auto waits = PromotionWaitsFor(last, {"rs1"});
  ASSERT_TRUE(waits.has_value());
  EXPECT_EQ(*waits, (ReplicaSet{"rs2", "rs3"}));
  EXPECT_FALSE(PromotionWaitsFor(last, {"rs1", "rs3"}).has_value());
}

TEST(InSyncLedgerTest, CoveredOnlyByThisEpochsOwnRecordWithinTheReplicasInSync) {
  InSyncLedger ledger;
  ledger.Reset(10, InSyncRecord{9, 4, {"rs1"}});
  EXPECT_FALSE(ledger.Covered({"rs1", "rs2"})) << "the previous director's record is not ours";
  auto want = ledger.Want({"rs1", "rs2"}, 4);
  ASSERT_TRUE(want.has_value());
  EXPECT_EQ(want->epoch, 10u);
  EXPECT_FALSE(ledger.Want({"rs1", "rs2"}, 5).has_value()) << "asked for already";
  ledger.OnRecorded(InSyncRecord{9, 4, {"rs1", "rs2"}});  // another epoch's: ignored
  EXPECT_FALSE(ledger.own_recorded());
  ledger.OnRecorded(*want);
  EXPECT_TRUE(ledger.Covered({"rs1", "rs2"}));
  EXPECT_TRUE(ledger.Covered({"rs1", "rs2", "rs3"}));
  EXPECT_FALSE(ledger.Covered({"rs1"})) << "rs2 left: etcd must hold the smaller set first";
  EXPECT_FALSE(ledger.Want({}, 6).has_value()) << "never recorded empty";
  auto smaller = ledger.Want({"rs1"}, 6);
  ASSERT_TRUE(smaller.has_value());
  ledger.OnRecordFailed(10);
  EXPECT_TRUE(ledger.Want({"rs1"}, 6).has_value()) << "a failed write is asked again";
  ledger.OnRecorded(*smaller);
  EXPECT_TRUE(ledger.Covered({"rs1"}));
}

}  // namespace
}  // namespace vsc::director
