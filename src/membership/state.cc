#include "membership/state.h"

namespace vsc::membership {

std::string_view StateName(State state) {
  switch (state) {
    case State::kJoining:
      return "JOINING";
    case State::kCatchingUp:
      return "CATCHING_UP";
    case State::kActive:
      return "ACTIVE";
    case State::kBusy:
      return "BUSY";
    case State::kSilent:
      return "SILENT";
    case State::kDown:
      return "DOWN";
    case State::kDraining:
      return "DRAINING";
    case State::kRemoved:
      return "REMOVED";
  }
  return "UNKNOWN";
}

bool AcceptsNewWork(State state) { return state == State::kActive; }

bool IsLive(State state) { return state != State::kDown && state != State::kRemoved; }

bool IsAllowedTransition(State from, State to) {
  using S = State;
  if (from == to) return false;  // a transition is a change
  switch (from) {
    case S::kRemoved:  // first registration
      return to == S::kJoining;
    case S::kJoining:  // first heartbeat (possibly FULL), catch-up, death, drain
      return to == S::kCatchingUp || to == S::kActive || to == S::kBusy || to == S::kDown ||
             to == S::kDraining;
    case S::kCatchingUp:
      return to == S::kActive || to == S::kJoining || to == S::kDown || to == S::kDraining;
    case S::kActive:  // ... or replication finds its data unusable (BeginCatchUp)
      return to == S::kBusy || to == S::kSilent || to == S::kJoining || to == S::kDown ||
             to == S::kDraining || to == S::kCatchingUp;
    case S::kBusy:
      return to == S::kActive || to == S::kSilent || to == S::kJoining || to == S::kDown ||
             to == S::kDraining || to == S::kCatchingUp;
    case S::kSilent:  // heartbeats resume (possibly FULL), restart, death, drain, catch-up
      return to == S::kActive || to == S::kBusy || to == S::kJoining || to == S::kDown ||
             to == S::kDraining || to == S::kCatchingUp;
    case S::kDown:
      return to == S::kJoining || to == S::kRemoved;
    case S::kDraining:  // death, removal, or the operator ends the drain (a weight above 0)
      return to == S::kDown || to == S::kRemoved || to == S::kActive;
  }
  return false;
}

}  // namespace vsc::membership
