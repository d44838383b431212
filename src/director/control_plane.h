// ControlPlane: the director's control state — membership, server endpoints and slots, the
// scheduling settings an operator can change at run time — and the ClusterView built from them.
// No I/O: the ControlServer feeds it decoded messages and `now`, the admin API calls it, and
// whoever changes it asks NeedsPublish() / BuildView().
//
// Thread safety: none; owned by the director's control thread.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "director/cluster_view.h"
#include "membership/membership.h"
#include "proto/control.pb.h"
#include "sched/scheduler.h"

namespace vsc::director {

struct ControlSettings {
  std::string scheduler = "wlc";
  uint32_t persistence_timeout_s = 0;
  uint32_t persistence_netmask = 0xffffffff;  // host order
  uint32_t max_servers = 1024;
};

class ControlPlane {
 public:
  ControlPlane(membership::Config config, ControlSettings settings);

  // A Register from a control session. Returns the ack to send; on refusal (invalid
  // registration, too many servers) accepted=false with the reason, and nothing changes.
  // `needs_catch_up` (from the replicator): the server replays the log or copies a snapshot
  // first, so it stays out of service (CATCHING_UP) until CatchUpDone.
  proto::RegisterAck OnRegister(const proto::Register& reg, uint16_t heartbeat_port,
                                TimePoint now, bool needs_catch_up = false);
  // Replication reports the server caught up: CATCHING_UP -> ACTIVE.
  void CatchUpDone(const std::string& id, TimePoint now);
  void OnHeartbeat(const proto::Heartbeat& hb, TimePoint now);
  void OnSessionClosed(const std::string& id, uint64_t incarnation, TimePoint now);
  // Missed heartbeats. Returns the ids that went DOWN (their sessions should be closed so they
  // re-register).
  std::vector<std::string> Tick(TimePoint now);

  // Operator actions (admin API). Errors say what to do.
  Status SetWeight(const std::string& id, uint32_t weight);
  Status Drain(const std::string& id, TimePoint now);
  Status Remove(const std::string& id, TimePoint now);
  Status SetScheduler(const std::string& name);
  // Replication: the server's data is unusable until it has caught up (no new work).
  Status BeginCatchUp(const std::string& id, const std::string& reason, TimePoint now);
  Status SetPersistence(uint32_t timeout_s, uint32_t netmask);

  // True when the published view is out of date: membership or settings changed, or load figures
  // changed since the last BuildView (load is republished at most once per call of the caller's
  // periodic publish).
  bool NeedsPublish() const;
  // True when membership or settings changed since the last BuildView (not just load).
  bool StructureChanged() const;
  // Builds the view to publish and marks the current state as published.
  ViewPtr BuildView();
  // The same view without marking anything published (for the admin API's listings).
  ViewPtr PeekView() const;

  const membership::Membership& membership() const { return membership_; }
  const ControlSettings& settings() const { return settings_; }
  // Slot of a server id (for counters), or -1.
  int SlotOf(const std::string& id) const;

 private:
  void Log(const std::vector<membership::Transition>& transitions);

  membership::Membership membership_;
  ControlSettings settings_;
  std::map<std::string, uint32_t, std::less<>> slots_;
  uint32_t next_slot_ = 0;
  uint64_t settings_version_ = 0;
  uint64_t published_membership_version_ = ~0ULL;
  uint64_t published_settings_version_ = ~0ULL;
  bool load_changed_ = false;
  uint64_t view_version_ = 0;
};

// Converts between the wire messages and membership's records.
membership::Registration ToRegistration(const proto::Register& reg);
membership::Heartbeat ToHeartbeat(const proto::Heartbeat& hb);

}  // namespace vsc::director
