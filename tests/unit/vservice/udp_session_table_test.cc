#include "vservice/udp_session_table.h"

#include <gtest/gtest.h>

#include "vservice_test_util.h"

namespace vsc::vservice {
namespace {

using std::chrono::seconds;
using testing::Ap;

UdpSessionTable Make(UdpSessionOptions o = {}) {
  auto t = UdpSessionTable::Create(o);
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  return std::move(t).value();
}

class UdpSessionTableTest : public ::testing::Test {
 protected:
  ManualClock clock_;
  const AddrPort client_ = Ap("192.0.2.7:40000");
  const AddrPort other_ = Ap("[2001:db8::7]:40000");
  const AddrPort dest_ = Ap("10.0.1.1:53");
  const AddrPort dest2_ = Ap("10.0.1.2:53");
};

TEST_F(UdpSessionTableTest, OptionsAreValidated) {
  UdpSessionOptions o;
  EXPECT_EQ(o.timeout, seconds(300));  // ipvsadm --set udp default
  o.timeout = seconds(0);
  EXPECT_EQ(UdpSessionTable::Create(o).status().code(), Code::kInvalidArgument);
  o = {};
  o.max_sessions = 0;
  EXPECT_EQ(UdpSessionTable::Create(o).status().code(), Code::kInvalidArgument);
  UdpSessionTable t = Make();
  EXPECT_FALSE(t.SetTimeout(seconds(-1)).ok());
}

TEST_F(UdpSessionTableTest, AClientStaysWithItsDestinationWhileItKeepsSending) {
  UdpSessionTable t = Make();
  EXPECT_EQ(t.Lookup(client_, clock_.Now()), nullptr);
  ASSERT_TRUE(t.Open(client_, dest_, clock_.Now()).ok());
  ASSERT_TRUE(t.Open(other_, dest2_, clock_.Now()).ok());  // IPv6 clients too
  for (int i = 0; i < 10; ++i) {
    clock_.Advance(seconds(299));
    const UdpSession* s = t.Lookup(client_, clock_.Now());
    ASSERT_NE(s, nullptr) << i;
    EXPECT_EQ(s->dest, dest_);
    EXPECT_EQ(s->last_seen, clock_.Now());
  }
  EXPECT_EQ(t.Lookup(other_, clock_.Now()), nullptr);  // silent for 2990 s: gone
  EXPECT_EQ(t.size(), 1u);
}

TEST_F(UdpSessionTableTest, RepliesRefreshTheSessionToo) {
  UdpSessionTable t = Make();
  ASSERT_TRUE(t.Open(client_, dest_, clock_.Now()).ok());
  clock_.Advance(seconds(200));
  EXPECT_TRUE(t.Refresh(client_, clock_.Now()));
  clock_.Advance(seconds(200));
  EXPECT_NE(t.Lookup(client_, clock_.Now()), nullptr);  // 400 s after open, 200 s after reply
  clock_.Advance(seconds(300));
  EXPECT_FALSE(t.Refresh(client_, clock_.Now()));  // exactly timeout after last seen: expired
}

TEST_F(UdpSessionTableTest, ExpireReturnsWhatExpiredOldestFirst) {
  UdpSessionTable t = Make(UdpSessionOptions{seconds(10), 100, false});
  ASSERT_TRUE(t.Open(client_, dest_, clock_.Now()).ok());
  clock_.Advance(seconds(3));
  ASSERT_TRUE(t.Open(other_, dest2_, clock_.Now()).ok());
  clock_.Advance(seconds(3));
  const AddrPort third = Ap("192.0.2.8:1");
  ASSERT_TRUE(t.Open(third, dest_, clock_.Now()).ok());
  ASSERT_NE(t.Lookup(client_, clock_.Now()), nullptr);  // t=6: client seen again

  clock_.Advance(seconds(7));  // t=13: other (seen at 3) expired; third (6), client (6) live
  const std::vector<UdpSession> gone = t.Expire(clock_.Now());
  ASSERT_EQ(gone.size(), 1u);
  EXPECT_EQ(gone[0].client, other_);
  EXPECT_EQ(gone[0].dest, dest2_);
  EXPECT_EQ(t.size(), 2u);
  clock_.Advance(seconds(3));  // t=16
  const std::vector<UdpSession> rest = t.Expire(clock_.Now());
  ASSERT_EQ(rest.size(), 2u);
  EXPECT_EQ(rest[0].client, third);  // opened at 6 before client was seen at 6
  EXPECT_EQ(rest[1].client, client_);
  EXPECT_EQ(t.size(), 0u);
  EXPECT_TRUE(t.Expire(clock_.Now()).empty());
}

TEST_F(UdpSessionTableTest, FullTableRefusesNewClientsButReclaimsExpiredOnes) {
  UdpSessionTable t = Make(UdpSessionOptions{seconds(10), 2, false});
  ASSERT_TRUE(t.Open(client_, dest_, clock_.Now()).ok());
  clock_.Advance(seconds(5));
  ASSERT_TRUE(t.Open(other_, dest_, clock_.Now()).ok());
  const AddrPort third = Ap("192.0.2.8:1");
  const Status full = t.Open(third, dest2_, clock_.Now());
  EXPECT_EQ(full.code(), Code::kResourceExhausted);
  EXPECT_NE(full.message().find("UDP session table full"), std::string::npos);
  EXPECT_NE(t.Lookup(client_, clock_.Now()), nullptr) << "a refusal evicted a live session";
  EXPECT_EQ(t.size(), 2u);

  clock_.Advance(seconds(10));  // t=15: other (5) is at its timeout, client (5) too
  ASSERT_TRUE(t.Open(third, dest2_, clock_.Now()).ok());
  EXPECT_EQ(t.size(), 2u);
  EXPECT_EQ(t.Lookup(third, clock_.Now())->dest, dest2_);
}

TEST_F(UdpSessionTableTest, OpenTwiceIsRefusedUnlessTheOldOneExpired) {
  UdpSessionTable t = Make(UdpSessionOptions{seconds(10), 10, false});
  ASSERT_TRUE(t.Open(client_, dest_, clock_.Now()).ok());
  EXPECT_EQ(t.Open(client_, dest2_, clock_.Now()).code(), Code::kAlreadyExists);
  EXPECT_EQ(t.Lookup(client_, clock_.Now())->dest, dest_);
  clock_.Advance(seconds(10));
  ASSERT_TRUE(t.Open(client_, dest2_, clock_.Now()).ok());
  EXPECT_EQ(t.Lookup(client_, clock_.Now())->dest, dest2_);
  EXPECT_EQ(t.size(), 1u);
}

TEST_F(UdpSessionTableTest, OnePacketModeKeepsNoSession) {
  UdpSessionTable t = Make(UdpSessionOptions{seconds(300), 10, true});
  EXPECT_TRUE(t.Open(client_, dest_, clock_.Now()).ok());
  EXPECT_EQ(t.size(), 0u);
  EXPECT_EQ(t.Lookup(client_, clock_.Now()), nullptr);
}

TEST_F(UdpSessionTableTest, CloseAndCloseDest) {
  UdpSessionTable t = Make();
  ASSERT_TRUE(t.Open(client_, dest_, clock_.Now()).ok());
  ASSERT_TRUE(t.Open(other_, dest_, clock_.Now()).ok());
  const AddrPort third = Ap("192.0.2.8:1");
  ASSERT_TRUE(t.Open(third, dest2_, clock_.Now()).ok());
  EXPECT_EQ(t.CloseDest(dest_), 2u);
  EXPECT_EQ(t.Lookup(client_, clock_.Now()), nullptr);
  EXPECT_NE(t.Lookup(third, clock_.Now()), nullptr);
  EXPECT_TRUE(t.Close(third));
  EXPECT_FALSE(t.Close(third));
  EXPECT_EQ(t.size(), 0u);
  EXPECT_TRUE(t.Expire(clock_.Now() + seconds(1000)).empty());
}

TEST_F(UdpSessionTableTest, ANewTimeoutAppliesToEverySession) {
  UdpSessionTable t = Make();
  ASSERT_TRUE(t.Open(client_, dest_, clock_.Now()).ok());
  clock_.Advance(seconds(60));
  ASSERT_TRUE(t.SetTimeout(seconds(30)).ok());
  EXPECT_EQ(t.Expire(clock_.Now()).size(), 1u);
}

}  // namespace
}  // namespace vsc::vservice
