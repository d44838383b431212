// DirectorList: a failed attempt moves on to the next director at once within a round; a round
// with a standby's answer is retried after the first backoff step without growing, a round of
// silence doubles the wait up to the cap; a registration and the end of its session reset it,
// and after a lost session silent rounds stay at the first step for kSteadyAfterLoss.
#include "realserver/director_list.h"

#include <gtest/gtest.h>

namespace vsc::realserver {
namespace {

using std::chrono::milliseconds;

TEST(DirectorListTest, OneDirectorBacksOffByDoublingUpToTheCap) {
  DirectorList d(1);
  EXPECT_EQ(d.OnFailure(false), milliseconds(100));
  EXPECT_EQ(d.OnFailure(false), milliseconds(200));
  EXPECT_EQ(d.OnFailure(false), milliseconds(400));
  EXPECT_EQ(d.OnFailure(false), milliseconds(800));
  EXPECT_EQ(d.OnFailure(false), milliseconds(1600));
  EXPECT_EQ(d.OnFailure(false), milliseconds(2000));
  EXPECT_EQ(d.OnFailure(false), milliseconds(2000));
  EXPECT_EQ(d.current(), 0u);
}

TEST(DirectorListTest, AFailureMovesToTheNextDirectorAtOnceUntilEveryOneWasTried) {
  DirectorList d(3);
  EXPECT_EQ(d.current(), 0u);
  EXPECT_EQ(d.OnFailure(false), milliseconds(0));
  EXPECT_EQ(d.current(), 1u);
  EXPECT_EQ(d.OnFailure(false), milliseconds(0));
  EXPECT_EQ(d.current(), 2u);
  EXPECT_EQ(d.OnFailure(false), milliseconds(100));  // the round is over: wait
  EXPECT_EQ(d.current(), 0u);
  EXPECT_EQ(d.OnFailure(false), milliseconds(0));
  EXPECT_EQ(d.OnFailure(false), milliseconds(0));
  EXPECT_EQ(d.OnFailure(false), milliseconds(200));  // a second silent round: doubled
}

TEST(DirectorListTest, ARoundWithAStandbysAnswerIsRetriedSoonWithoutGrowing) {
  DirectorList d(2);
  for (int round = 0; round < 4; ++round) {  // silent rounds grow the wait to 800 ms
    d.OnFailure(false);
    d.OnFailure(false);
  }
  EXPECT_EQ(d.OnFailure(false), milliseconds(0));   // the old active one: gone
  EXPECT_EQ(d.OnFailure(true), milliseconds(100));  // the other one: a standby, about to take over
  for (int round = 0; round < 5; ++round) {
    EXPECT_EQ(d.OnFailure(false), milliseconds(0));
    EXPECT_EQ(d.OnFailure(true), milliseconds(100)) << "round " << round;
  }
  // Once nobody answers as a standby any more, the wait grows again from the first step.
  d.OnFailure(false);
  EXPECT_EQ(d.OnFailure(false), milliseconds(100));
  d.OnFailure(false);
  EXPECT_EQ(d.OnFailure(false), milliseconds(200));
}

TEST(DirectorListTest, ALostSessionTriesTheSameDirectorFirstWithTheBackoffReset) {
  DirectorList d(2);
  d.OnFailure(false);  // 0 failed: now 1
  for (int i = 0; i < 6; ++i) d.OnFailure(false);
  EXPECT_EQ(d.current(), 1u);
  d.OnRegistered();
  EXPECT_EQ(d.OnSessionLost(), milliseconds(100));
  EXPECT_EQ(d.current(), 1u);  // the same director first: it may only have restarted
  EXPECT_EQ(d.OnFailure(false), milliseconds(0));
  EXPECT_EQ(d.current(), 0u);
  EXPECT_EQ(d.OnFailure(false), milliseconds(100));  // a fresh round, from the first step
}

TEST(DirectorListTest, AfterALostSessionSilentRoundsStayAtTheFirstStepWhileAFailoverMayLast) {
  DirectorList d(1);
  TimePoint now{std::chrono::seconds(100)};
  EXPECT_EQ(d.ConnectTimeout(now), milliseconds(1000));
  d.OnRegistered();
  EXPECT_EQ(d.OnSessionLost(now), milliseconds(100));
  const TimePoint lost = now;
  // The VIP is between hosts: nobody answers, the server keeps trying every 100 ms, and gives a
  // connect 300 ms instead of 1 s (a SYN lost in the move would wait for the 1 s RTO).
  while (now - lost < DirectorList::kSteadyAfterLoss) {
    ASSERT_EQ(d.ConnectTimeout(now), milliseconds(300));
    ASSERT_EQ(d.OnFailure(false, now), milliseconds(100));
    now += milliseconds(400);  // a connect that timed out, and the wait
  }
  // The director stays away: back off from it as from any silent director.
  EXPECT_EQ(d.ConnectTimeout(now), milliseconds(1000));
  EXPECT_EQ(d.OnFailure(false, now), milliseconds(100));
  EXPECT_EQ(d.OnFailure(false, now), milliseconds(200));
  EXPECT_EQ(d.OnFailure(false, now), milliseconds(400));
  // A registration ends a steady period at once.
  d.OnSessionLost(now);
  d.OnRegistered();
  EXPECT_EQ(d.ConnectTimeout(now), milliseconds(1000));
  EXPECT_EQ(d.OnFailure(false, now), milliseconds(100));
  EXPECT_EQ(d.OnFailure(false, now), milliseconds(200));
}

}  // namespace
}  // namespace vsc::realserver
