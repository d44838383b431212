// ControlPlane: the director's control state — membership, server endpoints and slots — and the
// ClusterView built from them. (The lookup service's scheduler and persistence are its entries'
// configuration in the virtual-service table.)
// No I/O: the ControlServer feeds it decoded messages and `now`, the admin API calls it, and
// whoever changes it asks NeedsPublish() / BuildView().
//
// Thread safety: none; owned by the director's control thread.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "director/cluster_view.h"
#include "membership/membership.h"
#include "proto/control.pb.h"
#include "sched/scheduler.h"

namespace vsc::director {

struct ControlSettings {
  uint32_t max_servers = 1024;
};

class ControlPlane {
 public:
  ControlPlane(membership::Config config, ControlSettings settings);

  // A fresh (challenge-proven) Register from control session `session` (a number the
  // ControlServer gives each session, never reused). Returns the ack to send; on refusal
  // accepted=false with the reason and its kind, logged at warn and counted, and nothing changes:
  // - invalid registration or too many servers (REFUSAL_INVALID, REFUSAL_FULL);
  // - REFUSAL_DUPLICATE_ID: another session holds the id with another incarnation, i.e. a second
  //   live process uses the id. The holder keeps it; a restarted holder is welcome once its old
  //   session closed (OnSessionClosed) or it went DOWN (Tick). The same incarnation on a new
  //   session is the holder reconnecting: it takes over (the shell closes the old session).
  // - REFUSAL_REMOVED: the operator removed this very incarnation (Remove); a new one is welcome.
  // `needs_catch_up` (from the replicator): the server replays the log or copies a snapshot
  // first, so it stays out of service (CATCHING_UP) until CatchUpDone.
  proto::RegisterAck OnRegister(const proto::Register& reg, uint64_t session,
                                uint16_t heartbeat_port, TimePoint now,
                                bool needs_catch_up = false);
  // A refusal of `reg` of `kind` for reason `why`, counted; membership unchanged; the caller
  // logs it. OnRegister's own refusals are these (each logged); the shell makes REFUSAL_STANDBY
  // ones (a standby director sends every server on to the active one; logged rate-limited).
  proto::RegisterAck Refuse(const proto::Register& reg, proto::RegisterAck::Refusal kind,
                            const std::string& why);
  // Replication reports the server caught up: CATCHING_UP -> ACTIVE.
  void CatchUpDone(const std::string& id, TimePoint now);
  void OnHeartbeat(const proto::Heartbeat& hb, TimePoint now);
  // Session `session` of server `id` ended: DOWN at once if it held the id; ignored otherwise
  // (a session replaced by a reconnect, or one that was refused).
  void OnSessionClosed(const std::string& id, uint64_t session, TimePoint now);
  // The session holding `id`, if any.
  std::optional<uint64_t> HolderSession(const std::string& id) const;
  // Missed heartbeats. Returns the ids that went DOWN (their sessions should be closed so they
  // re-register); they hold their id no more.
  std::vector<std::string> Tick(TimePoint now);

  // Operator actions (admin API). Errors say what to do.
  // A weight above 0 on a DRAINING server ends the drain (Membership::SetWeight).
  Status SetWeight(const std::string& id, uint32_t weight, TimePoint now);
  Status Drain(const std::string& id, TimePoint now);
  // Forgets a DRAINING or DOWN server; its incarnation is refused (REFUSAL_REMOVED) if it
  // registers again, so a removed process that still runs cannot rejoin by reconnecting.
  Status Remove(const std::string& id, TimePoint now);
  // Replication: the server's data is unusable until it has caught up (no new work).
  Status BeginCatchUp(const std::string& id, const std::string& reason, TimePoint now);

  // True when the published view is out of date: membership changed, or load figures
  // changed since the last BuildView (load is republished at most once per call of the caller's
  // periodic publish).
  bool NeedsPublish() const;
  // True when membership changed since the last BuildView (not just load).
  bool StructureChanged() const;
  // Builds the view to publish and marks the current state as published.
  ViewPtr BuildView();
  // The same view without marking anything published (for the admin API's listings).
  ViewPtr PeekView() const;

  const membership::Membership& membership() const { return membership_; }
  const ControlSettings& settings() const { return settings_; }
  // Registrations refused, by RegisterAck.Refusal value.
  uint64_t refusals(proto::RegisterAck::Refusal kind) const;

 private:
  void Log(const std::vector<membership::Transition>& transitions);
  // Why `reg` from `session` may not take its id now (duplicate, removed), or nullopt.
  std::optional<std::pair<proto::RegisterAck::Refusal, std::string>> IdentityConflict(
      const membership::Registration& reg, uint64_t session) const;

  membership::Membership membership_;
  ControlSettings settings_;
  std::map<std::string, uint32_t, std::less<>> slots_;
  uint32_t next_slot_ = 0;
  // Identity: the control session holding each registered id, and the incarnation the operator
  // removed for ids removed while (perhaps) still running. removed_ is bounded by max_servers.
  std::map<std::string, uint64_t, std::less<>> holders_;
  std::map<std::string, uint64_t, std::less<>> removed_;
  std::map<int, uint64_t> refusals_;
  uint64_t published_membership_version_ = ~0ULL;
  bool load_changed_ = false;
  uint64_t view_version_ = 0;
};

// Converts between the wire messages and membership's records.
membership::Registration ToRegistration(const proto::Register& reg);
membership::Heartbeat ToHeartbeat(const proto::Heartbeat& hb);

}  // namespace vsc::director
