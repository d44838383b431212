// mh: Maglev hashing on the client address (Maglev §3.4; LVS ip_vs_mh with mh-fallback).
//
// BuildTable fills a prime-sized table (SchedulerOptions::mh_table_size, 65537 by default, as
// Katran and the Maglev paper use) from every backend with weight > 0, including those that are
// momentarily unavailable: a server that flaps keeps its slots, and while it is out only its own
// clients move. Each backend's permutation comes from two independent salted hashes of its
// `key`, and backends take their turns in key order, so the placement of clients depends only
// on the (key, weight) set and the seed: every worker and every director agree whatever order
// their views list the servers in. Removing one of N backends moves about 1/N of the clients
// (plus a few percent, bounded in the tests).
//
// Pick looks up slot hash(client_ip) mod M. If that backend cannot take new work it rehashes
// the address with increasing offsets, as LVS mh-fallback does, so each client falls back to the
// same server; after a bounded number of rehashes it walks the table from the slot, and a
// backend that has no slot at all is used only as a last resort.
#pragma once

#include <cstdint>
#include <vector>

#include "sched/maglev_table.h"
#include "sched/scheduler.h"

namespace vsc::sched {

// The slots, shared by every worker's mh scheduler of one view.
struct MaglevSlots final : SchedTable {
  std::vector<uint32_t> slots;  // backend index per slot; empty when no backend has weight > 0
};

class MaglevScheduler final : public Scheduler {
 public:
  // `table_size` must be prime (checked by MakeScheduler). The seed salts every hash: directors
  // and workers that must agree on placement use the same seed.
  MaglevScheduler(uint32_t table_size, uint64_t seed) : m_(table_size), seed_(seed) {}

  std::string_view name() const override { return "mh"; }
  std::shared_ptr<const SchedTable> BuildTable(std::span<const Backend> backends) const override;
  void Adopt(std::shared_ptr<const SchedTable> table, std::span<const Backend> backends) override;
  const SchedTable* table() const override { return table_.get(); }
  std::optional<size_t> Pick(std::span<const Backend> backends, const Flow& flow) override;

  // The permutation a backend with this key gets (exposed for tests and tools).
  MaglevPermutation PermutationFor(uint64_t key, uint32_t weight) const;
  // Slot of a client address before any fallback.
  uint32_t SlotOf(uint32_t client_ip) const;
  // Backend index per slot of the adopted table; empty when no backend has weight > 0.
  const std::vector<uint32_t>& slots() const { return table_->slots; }

 private:
  uint32_t m_;
  uint64_t seed_;
  std::shared_ptr<const MaglevSlots> table_ = std::make_shared<MaglevSlots>();
};

}  // namespace vsc::sched
