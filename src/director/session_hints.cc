#include "director/session_hints.h"

namespace vsc::director {

void SessionHints::Adopt(const vservice::AddrPort& client, const vservice::AddrPort& dest,
                         TimePoint expiry, TimePoint now) {
  if (expiry <= now) return;
  std::lock_guard lock(mu_);
  if (hints_.size() >= capacity_ && !hints_.contains(client)) {
    std::erase_if(hints_, [&](const auto& kv) { return kv.second.expiry <= now; });
    if (hints_.size() >= capacity_) {
      ++dropped_;
      return;
    }
  }
  hints_.insert_or_assign(client, Hint{dest, expiry});
}

std::optional<vservice::AddrPort> SessionHints::Take(const vservice::AddrPort& client,
                                                     TimePoint now) {
  std::lock_guard lock(mu_);
  if (hints_.empty()) return std::nullopt;
  auto it = hints_.find(client);
  if (it == hints_.end()) return std::nullopt;
  const Hint hint = it->second;
  hints_.erase(it);
  if (hint.expiry <= now) return std::nullopt;
  return hint.dest;
}

size_t SessionHints::size() const {
  std::lock_guard lock(mu_);
  return hints_.size();
}

uint64_t SessionHints::dropped() const {
  std::lock_guard lock(mu_);
  return dropped_;
}

}  // namespace vsc::director
