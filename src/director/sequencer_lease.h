// SequencerLease: the pure state machine of a director's claim on the sequencer (issue 11). The
// right to sequence writes is an etcd key, /vscluster/<cluster>/sequencer, that only one
// director can create (a create_revision == 0 transaction) and that lives as long as the
// director's etcd lease. The machine says which etcd call to make next (LeaseKeeper makes it,
// etcd_client.h) and, from the answers and the time, whether the director holds the sequencer.
//
// - Held only while the key is ours and the lease is alive by our own reckoning: until the send
//   time of the last keepalive etcd answered, plus the TTL (the lower of ours and etcd's grant).
//   etcd counts the TTL from when it received that keepalive, so our deadline comes first and
//   no other director can create the key while we still sequence.
// - Keepalives every period (TTL / 3); a failed one is retried at period / 2; no answer within
//   the TTL loses the lease at once (View says so before any etcd call returns). A lost lease is
//   revoked once (best effort: it expires in etcd anyway) and a new one is granted.
// - A standby (another director's key, our lease alive) may watch that key from WatchFrom():
//   when etcd reports it deleted (the holder's lease expired or was revoked), OnHolderGone
//   makes the next claim due at once instead of a period after the last one.
// - The epoch is kEtcdEpochBase + the key's create_revision: unique across the cluster (etcd's
//   revisions only grow), higher at every new claim, and above every epoch a director without
//   etcd gives itself (a count of its restarts, replication/log.h).
//
// Time is a parameter; no I/O, no clock reads, no threads.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "common/clock.h"
#include "common/status.h"
#include "director/etcd_codec.h"

namespace vsc::director {

inline constexpr uint64_t kEtcdEpochBase = uint64_t{1} << 32;

struct LeaseAction {
  enum class Kind { kWait, kRevoke, kGrant, kAcquire, kKeepAlive };
  Kind kind = Kind::kWait;
  int64_t lease_id = 0;  // kRevoke, kAcquire, kKeepAlive
  TimePoint at{};        // kWait: until then (or until an answer changes things)
};

// What the sequencer may do: sequence under `epoch` while held and now < valid_until.
struct LeaseView {
  bool held = false;
  uint64_t epoch = 0;
  TimePoint valid_until{};
  std::string refusal;  // when not held: why, as a writer is told
  // When not held and etcd's last answer showed another director's key: that director (the
  // key's value). This director is then a standby, and sends real servers on to the holder
  // (REFUSAL_STANDBY). Empty while etcd does not answer: who holds it then is not known.
  std::string holder;
  bool operator==(const LeaseView&) const = default;
};

class SequencerLease {
 public:
  // `ttl`: the lease's TTL (etcd counts whole seconds: it is granted as ceil(ttl)).
  // `identity`: the key's value when we hold it; a key with our identity under another lease
  // is our own from before a loss, revoked at once instead of waited out.
  explicit SequencerLease(Duration ttl, std::string identity = "");

  // Applies the time: a lease with no keepalive answered within the TTL is lost.
  void Tick(TimePoint now);
  // The next call to make (after Tick(now)).
  LeaseAction Next(TimePoint now) const;

  // Answers; `sent` is when the request was sent.
  void OnRevoked();
  void OnGranted(const etcd::Lease& lease, TimePoint sent);
  void OnAcquire(const etcd::TxnResult& txn, TimePoint sent);
  void OnKeepAlive(int64_t ttl_s, TimePoint sent);
  // A call failed: NotFound (the lease is gone) loses it; anything else is remembered as the
  // reason (etcd unreachable or without quorum) and the call is retried.
  void OnError(LeaseAction::Kind call, const Status& error, TimePoint now);

  // The revision to watch the holder's key from (its mod_revision + 1), while this director is
  // a standby with a live lease and etcd answers; nullopt otherwise.
  std::optional<int64_t> WatchFrom() const;
  // The holder's key is gone: claim it now.
  void OnHolderGone(TimePoint now);

  LeaseView View(TimePoint now) const;
  Duration ttl() const { return ttl_; }
  Duration period() const { return period_; }
  int64_t ttl_seconds() const;
  int64_t lease_id() const { return lease_id_; }

 private:
  void Lose(const std::string& why);

  Duration ttl_;
  Duration period_;
  std::string identity_;
  int64_t lease_id_ = 0;      // our live lease, 0 none
  int64_t revoke_id_ = 0;     // a lost lease to revoke before granting again
  Duration granted_ttl_{0};   // the TTL we count: min(ttl_, etcd's grant)
  TimePoint alive_until_{};   // the lease is alive (by our reckoning) until then
  TimePoint keepalive_at_{};  // next keepalive
  TimePoint acquire_at_{};    // next claim of the key (while not holding)
  TimePoint grant_at_{};      // next grant (while without a lease)
  bool holding_ = false;
  uint64_t epoch_ = 0;
  std::string holder_;           // the other director's name, when it holds the key
  int64_t holder_revision_ = 0;  // that key's mod_revision, as the last claim saw it
  std::string etcd_error_;       // the last failed call's error ("" after a success)
  std::string lost_;             // why the lease was lost last, until held again
};

}  // namespace vsc::director
