// Persistence: LVS `-p timeout -M netmask` in front of any scheduler (DESIGN.md §6; seed 004:
// "all requests of one client go to the same server").
//
// A PersistenceTable maps (client_ip & netmask) to the key of the backend that client was sent
// to, with an expiry that every use refreshes (LVS restarts a connection template's timer each
// time it is used). It is bounded: when a new client arrives and the table is full, expired
// entries go first, then the entry closest to expiry (the least recently used one) is evicted
// and counted. Evicting rather than refusing is the Katran / Maglev connection-table choice:
// the evicted client loses stickiness only if the scheduler would now send it elsewhere, while
// refusing would leave every new client of a full table unrecorded until old ones expire.
//
// Per worker, per virtual service; not thread safe. Pure: time is the `now` parameter, which must
// not go backwards between calls (it comes from one monotonic clock).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <list>
#include <optional>
#include <span>
#include <unordered_map>

#include "common/clock.h"
#include "common/status.h"
#include "sched/backend.h"
#include "sched/scheduler.h"

namespace vsc::sched {

struct PersistenceOptions {
  Duration timeout = std::chrono::seconds(300);  // ipvsadm -p default (ipvsadm(8))
  uint32_t netmask = 0xFFFFFFFFu;                // -M, host byte order; default one client
  size_t max_entries = 65536;
  // LVS sysctl expire_quiescent_template (default 0): when false, a client recorded on a server
  // whose weight is now 0 keeps going there (quiescing stops new clients, not known ones).
  // Unavailable servers (DOWN, DRAINING...) are never reused either way.
  bool expire_quiescent = false;
};

// /prefix -> host-order mask: 24 -> 0xFFFFFF00. InvalidArgument outside [0, 32].
Result<uint32_t> NetmaskFromPrefix(int prefix_len);

class PersistenceTable {
 public:
  // InvalidArgument when timeout <= 0 or max_entries == 0.
  static Result<PersistenceTable> Create(const PersistenceOptions& options);

  PersistenceTable(PersistenceTable&&) = default;
  PersistenceTable& operator=(PersistenceTable&&) = default;

  // The backend key recorded for this client's network, unless absent or expired at `now`.
  std::optional<uint64_t> Lookup(uint32_t client_ip, TimePoint now) const;

  // Records (or replaces) the client's network -> backend_key, expiring at now + timeout.
  void Record(uint32_t client_ip, uint64_t backend_key, TimePoint now);

  // Records network -> backend_key expiring at `expiry`, a template another director recorded
  // (director/sync_*.h): it replaces this table's entry for that network, since the peer saw
  // the client last. Ignored unless now < expiry <= now + timeout. Kept in expiry order, so
  // eviction and Expire still go soonest-first.
  void Adopt(uint32_t network, uint64_t backend_key, TimePoint expiry, TimePoint now);

  // Removes the entry for the client's network, if any.
  void Forget(uint32_t client_ip);

  // Removes every entry expired at `now`; returns how many. Call it from a periodic timer so
  // memory follows the live client count; Lookup ignores expired entries regardless.
  size_t Expire(TimePoint now);

  // Calls f(masked_address, backend_key, expiry) for every entry, expired ones included
  // (ipvsadm -L -c lists templates).
  template <typename F>
  void ForEach(F&& f) const {
    for (const auto& [addr, e] : entries_) f(addr, e.backend_key, e.expiry);
  }

  size_t size() const { return entries_.size(); }
  uint64_t evictions() const { return evictions_; }
  const PersistenceOptions& options() const { return options_; }

 private:
  explicit PersistenceTable(const PersistenceOptions& options) : options_(options) {}

  struct Entry {
    uint64_t backend_key;
    TimePoint expiry;
    std::list<uint32_t>::iterator order_pos;
  };

  // Inserts or moves `masked` to expire at `expiry`, evicting as Record documents.
  void Place(uint32_t masked, uint64_t backend_key, TimePoint expiry, TimePoint now);

  PersistenceOptions options_;
  std::unordered_map<uint32_t, Entry> entries_;  // masked address -> entry
  std::list<uint32_t> order_;                    // masked addresses, soonest expiry first
  uint64_t evictions_ = 0;
};

// LVS ip_vs_sched_persist(): reuse the client's recorded backend if it is still in `backends`
// and may take the client (available; weight > 0 too when expire_quiescent), refreshing the
// record; otherwise pick with `scheduler` and record the choice. std::nullopt when the scheduler
// finds no backend (nothing is recorded then). O(n) in the backend count for the key match.
// `reused`, when given, says whether the client's recorded backend was kept (a refresh) rather
// than a new one recorded.
std::optional<size_t> PickPersistent(PersistenceTable& table, Scheduler& scheduler,
                                     std::span<const Backend> backends, const Flow& flow,
                                     TimePoint now, bool* reused = nullptr);

}  // namespace vsc::sched
