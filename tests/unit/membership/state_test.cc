#include "membership/state.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace vsc::membership {
namespace {

constexpr State kAll[] = {State::kJoining, State::kCatchingUp, State::kActive,   State::kBusy,
                          State::kSilent,  State::kDown,       State::kDraining, State::kRemoved};

TEST(StateTest, NamesAreTheDocumentedOnesAndDistinct) {
  EXPECT_EQ(StateName(State::kJoining), "JOINING");
  EXPECT_EQ(StateName(State::kCatchingUp), "CATCHING_UP");
  EXPECT_EQ(StateName(State::kActive), "ACTIVE");
  EXPECT_EQ(StateName(State::kBusy), "BUSY");
  EXPECT_EQ(StateName(State::kSilent), "SILENT");
  EXPECT_EQ(StateName(State::kDown), "DOWN");
  EXPECT_EQ(StateName(State::kDraining), "DRAINING");
  EXPECT_EQ(StateName(State::kRemoved), "REMOVED");
  std::set<std::string> names;
  for (State s : kAll) names.insert(std::string(StateName(s)));
  EXPECT_EQ(names.size(), kStateCount);
}

TEST(StateTest, OnlyActiveAcceptsNewWork) {
  for (State s : kAll) EXPECT_EQ(AcceptsNewWork(s), s == State::kActive) << StateName(s);
}

TEST(StateTest, NoSelfTransitionsAndDownOrRemovedAreNotLive) {
  for (State s : kAll) {
    EXPECT_FALSE(IsAllowedTransition(s, s)) << StateName(s);
    EXPECT_EQ(IsLive(s), s != State::kDown && s != State::kRemoved) << StateName(s);
  }
  // The only way back from DOWN is re-registration; the only way in from absent is JOINING.
  for (State to : kAll) {
    EXPECT_EQ(IsAllowedTransition(State::kDown, to),
              to == State::kJoining || to == State::kRemoved);
    EXPECT_EQ(IsAllowedTransition(State::kRemoved, to), to == State::kJoining);
  }
}

}  // namespace
}  // namespace vsc::membership
