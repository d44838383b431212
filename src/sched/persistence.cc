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
  if (it != entries_.end()) {
    it->second.backend_key = backend_key;
    it->second.expiry = expiry;
    // Same timeout for everyone, so the refreshed entry now expires last.
    order_.splice(order_.end(), order_, it->second.order_pos);
    return;
  }
  if (entries_.size() >= options_.max_entries) {
    Expire(now);
    if (entries_.size() >= options_.max_entries) {
      entries_.erase(order_.front());
      order_.pop_front();
      ++evictions_;
    }
  }
  order_.push_back(masked);
  entries_.emplace(masked, Entry{backend_key, expiry, std::prev(order_.end())});
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
                                     TimePoint now) {
  if (std::optional<uint64_t> key = table.Lookup(flow.client_ip, now)) {
    for (size_t i = 0; i < backends.size(); ++i) {
      const Backend& b = backends[i];
      if (b.key != *key) continue;
      const bool quiesced_out = table.options().expire_quiescent && b.weight == 0;
      if (b.available && !quiesced_out) {
        table.Record(flow.client_ip, b.key, now);
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
