#include "sched/mh.h"

#include <algorithm>
#include <cstdlib>
#include <numeric>

#include "sched/hash.h"

namespace vsc::sched {
namespace {

// Salts for the three hash functions: offset, skip and the client lookup must be independent.
constexpr uint64_t kOffsetSalt = 0x6f66667365742d31ULL;
constexpr uint64_t kSkipSalt = 0x736b69702d2d2d32ULL;
constexpr uint64_t kLookupSalt = 0x6c6f6f6b75702d33ULL;

// LVS walks up to M rehashes; a few dozen find a live server unless almost all are out, and
// the table walk after them bounds the worst case.
constexpr uint32_t kMaxRehash = 32;

}  // namespace

MaglevPermutation MaglevScheduler::PermutationFor(uint64_t key, uint32_t weight) const {
  MaglevPermutation p;
  p.offset = static_cast<uint32_t>(SaltedHash(key, seed_ ^ kOffsetSalt) % m_);
  p.skip = static_cast<uint32_t>(SaltedHash(key, seed_ ^ kSkipSalt) % (m_ - 1) + 1);
  p.weight = weight;
  return p;
}

uint32_t MaglevScheduler::SlotOf(uint32_t client_ip) const {
  return static_cast<uint32_t>(SaltedHash(client_ip, seed_ ^ kLookupSalt) % m_);
}

std::shared_ptr<const SchedTable> MaglevScheduler::BuildTable(
    std::span<const Backend> backends) const {
  // Turn order decides which backend wins a contested slot, so fix it by key, not list order.
  std::vector<uint32_t> order(backends.size());
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(),
                   [&](uint32_t a, uint32_t b) { return backends[a].key < backends[b].key; });
  std::vector<MaglevPermutation> perms;
  perms.reserve(backends.size());
  for (uint32_t i : order) perms.push_back(PermutationFor(backends[i].key, backends[i].weight));
  auto table = std::make_shared<MaglevSlots>();
  table->slots = BuildMaglevTable(perms, m_);
  for (uint32_t& slot : table->slots) slot = order[slot];
  return table;
}

void MaglevScheduler::Adopt(std::shared_ptr<const SchedTable> table,
                            std::span<const Backend> /*backends*/) {
  table_ = std::dynamic_pointer_cast<const MaglevSlots>(table);
  if (!table_) std::abort();  // a table built by another scheduler
}

std::optional<size_t> MaglevScheduler::Pick(std::span<const Backend> backends, const Flow& flow) {
  const std::vector<uint32_t>& table_ = this->table_->slots;
  auto usable = [&](uint32_t slot) {
    const uint32_t d = table_[slot];
    return d < backends.size() && CanTakeNewWork(backends[d]);
  };
  if (!table_.empty()) {
    const uint32_t slot = SlotOf(flow.client_ip);
    if (usable(slot)) return table_[slot];
    // Everyone out is the common failure case; answer it in O(n), not O(M).
    if (std::none_of(backends.begin(), backends.end(), CanTakeNewWork)) return std::nullopt;
    for (uint32_t offset = 1; offset <= kMaxRehash; ++offset) {
      const uint64_t rehashed = SaltedHash(
          (static_cast<uint64_t>(flow.client_ip) << 32) | offset, seed_ ^ kLookupSalt);
      const uint32_t s = static_cast<uint32_t>(rehashed % m_);
      if (usable(s)) return table_[s];
    }
    for (uint32_t step = 1, s = slot; step < m_; ++step) {
      s = (s + 1 == m_) ? 0 : s + 1;
      if (usable(s)) return table_[s];
    }
  }
  // Only backends without a slot remain (weight raised from 0 without a Rebuild).
  for (size_t i = 0; i < backends.size(); ++i) {
    if (CanTakeNewWork(backends[i])) return i;
  }
  return std::nullopt;
}

}  // namespace vsc::sched
