#include "director/shared_persistence.h"

#include <chrono>
#include <cstdlib>
#include <utility>

#include "sched/hash.h"

namespace vsc::director {
namespace {

sched::PersistenceTable MakeTable(const sched::PersistenceOptions& options) {
  auto table = sched::PersistenceTable::Create(options);
  if (!table.ok()) std::abort();  // the service table validated timeout and netmask
  return std::move(table).value();
}

}  // namespace

uint32_t FoldNetwork(const vservice::IpAddress& network) {
  if (network.is_v4()) return network.v4();
  const auto& b = network.bytes();
  uint64_t h = 0;
  for (size_t i = 0; i < b.size(); ++i) h = sched::SaltedHash(h ^ b[i], i);
  return static_cast<uint32_t>(h ^ (h >> 32));
}

SharedPersistence::SharedPersistence(const sched::PersistenceOptions& options,
                                     vservice::Family family)
    : table_(MakeTable(options)), family_(family) {}

uint32_t SharedPersistence::KeyOf(const vservice::IpAddress& network) const {
  return FoldNetwork(network) & table_.options().netmask;
}

SharedPersistence::Picked SharedPersistence::Pick(sched::Scheduler& scheduler,
                                                  std::span<const sched::Backend> backends,
                                                  const sched::Flow& flow,
                                                  const vservice::IpAddress& network,
                                                  TimePoint now) {
  Picked out;
  const uint32_t key = flow.client_ip & table_.options().netmask;
  std::lock_guard lock(mu_);
  SweepLocked(now);
  bool reused = false;
  out.index = sched::PickPersistent(table_, scheduler, backends, flow, now, &reused);
  if (!out.index) return out;
  if (family_ == vservice::Family::kV6 && !reused) networks_.insert_or_assign(key, network);
  auto [noted, fresh] = noted_.try_emplace(key, now);
  if (fresh || !reused || now - noted->second >= table_.options().timeout / 2) {
    noted->second = now;
    out.note = true;
  }
  return out;
}

bool SharedPersistence::Adopt(const vservice::IpAddress& network, uint64_t backend_key,
                              TimePoint expiry, TimePoint now) {
  if (network.family() != family_) return false;
  const uint32_t key = KeyOf(network);
  std::lock_guard lock(mu_);
  table_.Adopt(key, backend_key, expiry, now);
  if (!table_.Lookup(key, now)) return true;  // expired or beyond the timeout: ignored
  if (family_ == vservice::Family::kV6) networks_.insert_or_assign(key, network);
  // What a peer sent needs no note back until half a timeout of use here.
  noted_.insert_or_assign(key, now);
  return true;
}

std::shared_ptr<SharedPersistence> MakeSharedPersistence(vservice::Family family,
                                                         const vservice::Persistence& p,
                                                         bool expire_quiescent) {
  sched::PersistenceOptions po;
  po.timeout = std::chrono::seconds(p.timeout_s);
  po.expire_quiescent = expire_quiescent;
  const int prefix = family == vservice::Family::kV4 ? p.prefix_len : 32;
  po.netmask = prefix == 0 ? 0 : ~uint32_t{0} << (32 - prefix);
  return std::make_shared<SharedPersistence>(po, family);
}

size_t SharedPersistence::size() const {
  std::lock_guard lock(mu_);
  return table_.size();
}

void SharedPersistence::SweepLocked(TimePoint now) {
  if (++picks_since_sweep_ < 1024) return;
  picks_since_sweep_ = 0;
  table_.Expire(now);
  if (networks_.size() > table_.size()) {
    std::erase_if(networks_, [&](const auto& kv) { return !table_.Lookup(kv.first, now); });
  }
  if (noted_.size() <= table_.size()) return;
  std::erase_if(noted_, [&](const auto& kv) { return !table_.Lookup(kv.first, now); });
}

}  // namespace vsc::director
