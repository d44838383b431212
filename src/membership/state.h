// The life cycle of a real server as the director sees it (DESIGN.md §5).
//
//   (absent = REMOVED) -> JOINING -> [CATCHING_UP ->] ACTIVE <-> BUSY
//   ACTIVE/BUSY -> SILENT (M missed heartbeats) -> DOWN (N missed, session closed, DOWN flag)
//   any live state -> DRAINING (operator) -> REMOVED;  DOWN -> REMOVED;  DOWN -> JOINING
//   (re-register)
//
// Only ACTIVE takes new work. Plain values: no threads, no allocation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace vsc::membership {

enum class State : uint8_t {
  kJoining,     // registered; waiting for the first heartbeat of this incarnation
  kCatchingUp,  // alive, but replaying the replication log: no reads yet
  kActive,      // alive and takes new work
  kBusy,        // alive, reports FULL: existing flows continue, no new work
  kSilent,      // M heartbeats missed: no new work, not yet declared dead
  kDown,        // dead for this incarnation; only a new registration brings it back
  kDraining,    // operator drain: weight 0, existing flows finish
  kRemoved,     // forgotten; also the "from" state of a first registration
};

inline constexpr size_t kStateCount = 8;

// "JOINING", "CATCHING_UP", "ACTIVE", "BUSY", "SILENT", "DOWN", "DRAINING", "REMOVED".
std::string_view StateName(State state);

// True for ACTIVE only: the one state in which schedulers may pick the server for a new flow.
bool AcceptsNewWork(State state);

// True for the states in which the server process is believed to be running
// (JOINING, CATCHING_UP, ACTIVE, BUSY, SILENT, DRAINING).
bool IsLive(State state);

// The transitions the rules allow; the property tests hold every emitted Transition to this.
bool IsAllowedTransition(State from, State to);

}  // namespace vsc::membership
