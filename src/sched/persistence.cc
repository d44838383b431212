#include "sched/persistence.h"

#include <string>

namespace vsc::sched {

Result<uint32_t> NetmaskFromPrefix(int prefix_len) {
  if (prefix_len < 0 || prefix_len > 32) {
    return InvalidArgument("netmask prefix /" + std::to_string(prefix_len) +
                           " is out of range; use 0..32 (32 = one client per entry)");
  }
  if (prefix_len == 0) return 0u;
  return static_cast<uint32_t>(0xFFFFFFFFull << (32 - prefix_len));
}

Result<PersistenceTable> PersistenceTable::Create(const PersistenceOptions& options) {
  if (options.timeout <= Duration::zero()) {
    return InvalidArgument("persistence timeout must be positive; ipvsadm's default is 300 s");
  }
  if (options.max_entries == 0) {
    return InvalidArgument("persistence table needs room for at least one entry");
  }
  return PersistenceTable(options);
}

std::optional<uint64_t> PersistenceTable::Lookup(uint32_t client_ip, TimePoint now) const {
  auto it = entries_.find(client_ip & options_.netmask);
  if (it == entries_.end() || it->second.expiry <= now) return std::nullopt;
  return it->second.backend_key;
}

void PersistenceTable::Record(uint32_t client_ip, uint64_t backend_key, TimePoint now) {
  const uint32_t masked = client_ip & options_.netmask;
  const TimePoint expiry = now + options_.timeout;
  auto it = entries_.find(masked);
  if (it == entries_.end()) return Place(masked, backend_key, expiry, now);
  // now + timeout is the latest expiry any entry has (adopted ones included), so the refreshed
  // entry moves to the back without a search or an allocation.
  it->second.backend_key = backend_key;
  it->second.expiry = expiry;
  order_.splice(order_.end(), order_, it->second.order_pos);
}

void PersistenceTable::Adopt(uint32_t network, uint64_t backend_key, TimePoint expiry,
                             TimePoint now) {
  if (expiry <= now || expiry > now + options_.timeout) return;
  Place(network & options_.netmask, backend_key, expiry, now);
}

void PersistenceTable::Place(uint32_t masked, uint64_t backend_key, TimePoint expiry,
                             TimePoint now) {
  auto it = entries_.find(masked);
  if (it != entries_.end()) {
    order_.erase(it->second.order_pos);
    entries_.erase(it);
  } else if (entries_.size() >= options_.max_entries) {
    Expire(now);
    if (entries_.size() >= options_.max_entries) {
      entries_.erase(order_.front());
      order_.pop_front();
      ++evictions_;
    }
  }
  // The list stays in expiry order. A recorded entry expires last (one timeout for everyone), so
  // the search from the back stops at once; an adopted one lands close to the back.
  auto pos = order_.end();
  while (pos != order_.begin() && entries_.at(*std::prev(pos)).expiry > expiry) --pos;
  entries_.emplace(masked, Entry{backend_key, expiry, order_.insert(pos, masked)});
}

void PersistenceTable::Forget(uint32_t client_ip) {
  auto it = entries_.find(client_ip & options_.netmask);
  if (it == entries_.end()) return;
  order_.erase(it->second.order_pos);
  entries_.erase(it);
}

size_t PersistenceTable::Expire(TimePoint now) {
  size_t removed = 0;
  while (!order_.empty()) {
    auto it = entries_.find(order_.front());
    if (it->second.expiry > now) break;
    entries_.erase(it);
    order_.pop_front();
    ++removed;
  }
  return removed;
}

std::optional<size_t> PickPersistent(PersistenceTable& table, Scheduler& scheduler,
                                     std::span<const Backend> backends, const Flow& flow,
                                     TimePoint now, bool* reused) {
  if (reused != nullptr) *reused = false;
  if (std::optional<uint64_t> key = table.Lookup(flow.client_ip, now)) {
    for (size_t i = 0; i < backends.size(); ++i) {
      const Backend& b = backends[i];
      if (b.key != *key) continue;
      const bool quiesced_out = table.options().expire_quiescent && b.weight == 0;
      if (b.available && !quiesced_out) {
        table.Record(flow.client_ip, b.key, now);
        if (reused != nullptr) *reused = true;
        return i;
      }
      break;
    }
  }
  std::optional<size_t> picked = scheduler.Pick(backends, flow);
  if (picked) table.Record(flow.client_ip, backends[*picked].key, now);
  return picked;
}

}  // namespace vsc::sched
