// Losing etcd members under the keepalived pair of netns_vrrp_test (issue 11). One of the three
// down changes nothing: A keeps the lease, the VIP and its writes. Two down leave no quorum: A
// stops sequencing within the TTL and its writers read "no quorum for the sequencer lease"; B
// cannot take the lease either, so both hosts lose chk_vsc_role's weight and the VIP stays on A
// (100 against 90): lookups through it go on. With the quorum back a director takes the lease
// again and writes resume right after the last one acknowledged, on identical replicas.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <string>

#include "netns/vrrp_fixture.h"

namespace vsc::netns {
namespace {

using namespace std::chrono_literals;

TEST_F(NetnsVrrpTest, OneEtcdMemberDownChangesNothingTwoStopWritesButNotLookups) {
  const uint64_t before = WriteAckedThroughVip(3);
  etcd_->Kill(1);
  const uint64_t one_down = WriteAckedThroughVip(5);
  ASSERT_FALSE(HasFailure()) << "one etcd member down stopped the writes";
  EXPECT_EQ(one_down, before + 5);
  EXPECT_EQ(Role(0).exit_code, 0) << Role(0).line;
  EXPECT_TRUE(HasVip("dira"));

  etcd_->Kill(2);
  RealClock clock;
  const TimePoint lost = clock.Now();
  ASSERT_TRUE(
      WaitUntil([&] { return Role(0).exit_code == 1; }, std::chrono::milliseconds(kTtlMs + 3000)))
      << "A still sequences without an etcd quorum: " << Role(0).line;
  const Duration stopped = clock.Now() - lost;
  std::printf("two etcd members of three down: A stopped sequencing after %.0f ms (TTL %u ms)\n",
              ToMillis(stopped), kTtlMs);
  EXPECT_TRUE(Contains(Role(0).line, "no quorum for the sequencer lease")) << Role(0).line;
  const Written refused = WriteThroughVip();
  EXPECT_TRUE(Contains(refused.outcome, "no quorum for the sequencer lease")) << refused.outcome;
  for (int i = 0; i < 50; ++i) {
    Answer a = Lookup(2s);
    ASSERT_TRUE(a.answered) << "lookup " << i << " through the VIP without an etcd quorum";
    ASSERT_EQ(a.problem, "") << a.from;
  }
  EXPECT_TRUE(HasVip("dira"));
  EXPECT_FALSE(HasVip("dirb"));
  EXPECT_NE(Role(1).exit_code, 0) << "B sequences without an etcd quorum: " << Role(1).line;

  ASSERT_TRUE(etcd_->Restart(1).ok());
  ASSERT_TRUE(etcd_->Restart(2).ok());
  const Written back = FirstWriteThroughVip(20s);
  ASSERT_EQ(back.outcome, "ok");
  EXPECT_EQ(back.seq, one_down + 1) << "the log resumes after the last acknowledged write";
  const int active = Role(0).exit_code == 0 ? 0 : 1;
  EXPECT_TRUE(VerifyOk(active)) << "the replicas differ after the quorum came back";
}

}  // namespace
}  // namespace vsc::netns
