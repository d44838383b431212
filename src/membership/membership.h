// Membership: the director's table of real servers and the state machine each one follows
// (DESIGN.md §5, states in membership/state.h).
//
// Pure: no I/O, no threads, no clock reads. Every input carries `now`; every call that can change
// a state returns the transitions it caused, in id order, one per state change, so the shell can
// log them and republish its ClusterView. Timing is measured from the last accepted heartbeat:
// a server is SILENT once `now - last >= silent_after * interval`, DOWN once
// `now - last >= down_after * interval` (checked by Tick).
//
// Rules beyond the diagram, chosen here:
// - A server the table does not hold is REMOVED: a first registration is REMOVED -> JOINING.
// - DOWN is sticky for its incarnation: heartbeats of a DOWN incarnation are counted stale, and
//   only a registration (same or newer incarnation) brings the server back to JOINING. The shell
//   should therefore close the control session of a server declared DOWN by timeout, so the
//   server reconnects and re-registers.
// - JOINING and CATCHING_UP do not pass through SILENT (they take no work anyway) and go DOWN
//   after N missed periods; DRAINING behaves the same.
// - A newer incarnation registering while live restarts the cycle at JOINING; while DRAINING it
//   stays DRAINING (the operator's decision stands until Remove).
// - A registration of the current incarnation while live (control session reconnect) refreshes
//   the registered data without a state change. Older incarnations are ignored and counted while
//   the server is live; once it is DOWN any other incarnation is a restart (its wall clock, which
//   the incarnation is taken from, may have stepped back). Refusing a second live process with
//   the same id is the shell's job (ControlPlane), which knows the control sessions.
// - An operator weight (SetWeight) overrides the registered weight and survives re-registration;
//   Remove forgets it.
//
// Thread safety: none; owned by the director's control thread.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "membership/records.h"
#include "membership/state.h"

namespace vsc::membership {

// ipvsadm's limit ("valid values of weight are 0 through to 65535").
inline constexpr uint32_t kMaxWeight = 65535;

struct Config {
  Duration heartbeat_interval = std::chrono::milliseconds(200);
  int silent_after = 2;  // missed periods before SILENT (M)
  int down_after = 5;    // missed periods before DOWN (N)
};

// Ok, or InvalidArgument naming the bad field: interval > 0, 1 <= silent_after <= down_after.
Status ValidateConfig(const Config& config);

// Ok, or InvalidArgument: non-empty id, weight <= kMaxWeight, every endpoint with a service name,
// a host and a non-zero port. The shell checks this before Register and refuses the session.
Status ValidateRegistration(const Registration& reg);

struct Counters {
  // transitions[from][to], indexed by the State's value.
  std::array<std::array<uint64_t, kStateCount>, kStateCount> transitions{};
  uint64_t heartbeats_accepted = 0;
  uint64_t heartbeats_unknown =
      0;  // no registration for that id, or a newer unregistered incarnation
  uint64_t heartbeats_stale = 0;  // older incarnation, DOWN incarnation, or counter not increasing
  uint64_t registrations = 0;     // accepted
  uint64_t registrations_stale = 0;  // older incarnation than the one held: ignored

  uint64_t Transitions(State from, State to) const {
    return transitions[static_cast<size_t>(from)][static_cast<size_t>(to)];
  }
  uint64_t TotalTransitions() const;
};

class Membership {
 public:
  // Aborts if ValidateConfig(config) is not ok: the shell validates configuration at start-up.
  explicit Membership(Config config);

  // New server or re-registration; returns the transitions caused. Weight 0 allowed; a weight
  // above kMaxWeight is clamped (ValidateRegistration refuses it first).
  std::vector<Transition> Register(const Registration& reg, TimePoint now);

  // Unknown id or stale heartbeat: no transition, counted.
  std::vector<Transition> OnHeartbeat(const Heartbeat& hb, TimePoint now);

  // The server's control session ended: DOWN at once if live.
  std::vector<Transition> OnSessionClosed(std::string_view id, TimePoint now);
  // Same, but ignored when `incarnation` is not the registered one: the old session of a
  // restarted server may close after the new one registered.
  std::vector<Transition> OnSessionClosed(std::string_view id, uint64_t incarnation, TimePoint now);

  // Missed-heartbeat detection; call at least once per heartbeat interval.
  std::vector<Transition> Tick(TimePoint now);

  // Operator drain: DRAINING, weight 0. NotFound for an unknown id, FailedPrecondition for a DOWN
  // server (nothing to drain; remove it). Draining a DRAINING server returns no transitions.
  Result<std::vector<Transition>> Drain(std::string_view id, TimePoint now);

  // DRAINING or DOWN -> REMOVED, then the server is forgotten. NotFound for an unknown id,
  // FailedPrecondition for any other state (drain first so its flows can finish).
  Result<std::vector<Transition>> Remove(std::string_view id, TimePoint now);

  // Operator weight, 0..kMaxWeight (InvalidArgument above, NotFound for an unknown id). A
  // weight above 0 on a DRAINING server ends the drain (as ipvsadm -e -w N on a quiescent
  // destination): DRAINING -> ACTIVE (a server whose heartbeats stopped
  // goes SILENT and DOWN at the next Tick, as any). A server drained
  // while it was catching up is refused (FailedPrecondition: its data may be behind) and
  // nothing changes.
  Result<std::vector<Transition>> SetWeight(std::string_view id, uint32_t weight, TimePoint now);

  // Replication found the server's data unusable (diverged, or it must copy a snapshot): ACTIVE,
  // BUSY or SILENT -> CATCHING_UP at once (no new work) until CatchUpDone. JOINING only records
  // the need, so its first heartbeat leads to CATCHING_UP. NotFound for an unknown id;
  // FailedPrecondition for DOWN, DRAINING (no work anyway) and REMOVED.
  Result<std::vector<Transition>> BeginCatchUp(std::string_view id, std::string reason,
                                               TimePoint now);

  // Replication reports the server caught up: CATCHING_UP -> ACTIVE. Before the first heartbeat
  // (JOINING) it only clears the need, so that heartbeat moves the server to ACTIVE.
  std::vector<Transition> CatchUpDone(std::string_view id, TimePoint now);

  // nullptr if the id is not held. Valid until the next non-const call.
  const ServerRecord* Find(std::string_view id) const;
  std::vector<ServerRecord> Snapshot() const;  // sorted by id
  size_t size() const { return servers_.size(); }

  // Bumps on any change of state, weight or membership (not on load-only heartbeats).
  uint64_t version() const { return version_; }
  const Counters& counters() const { return counters_; }
  const Config& config() const { return config_; }

 private:
  struct Entry {
    ServerRecord rec;
    std::optional<uint32_t> operator_weight;
    bool catch_up_pending = false;  // from the registration, cleared by CatchUpDone
    bool has_counter = false;       // a heartbeat of this incarnation was accepted
    uint64_t last_counter = 0;
  };

  // Moves `e` to `to` if it differs, recording the transition into `out`.
  void Move(Entry& e, State to, std::string reason, TimePoint now, std::vector<Transition>& out);
  // Recomputes the effective weight; bumps the version if it changed.
  void RefreshWeight(Entry& e);
  Entry* FindEntry(std::string_view id);

  Config config_;
  std::map<std::string, Entry, std::less<>> servers_;
  uint64_t version_ = 0;
  Counters counters_;
};

}  // namespace vsc::membership
