#include "director/shared_persistence.h"

#include <chrono>
#include <cstdlib>
#include <utility>

namespace vsc::director {
namespace {

sched::PersistenceTable MakeTable(const sched::PersistenceOptions& options) {
  auto table = sched::PersistenceTable::Create(options);
  if (!table.ok()) std::abort();  // the service table validated timeout and netmask
  return std::move(table).value();
}

}  // namespace

SharedPersistence::SharedPersistence(const sched::PersistenceOptions& options)
    : table_(MakeTable(options)) {}

SharedPersistence::Picked SharedPersistence::Pick(sched::Scheduler& scheduler,
                                                  std::span<const sched::Backend> backends,
                                                  const sched::Flow& flow, TimePoint now) {
  Picked out;
  out.key = flow.client_ip & table_.options().netmask;
  std::lock_guard lock(mu_);
  SweepLocked(now);
  bool reused = false;
  out.index = sched::PickPersistent(table_, scheduler, backends, flow, now, &reused);
  if (!out.index) return out;
  auto [noted, fresh] = noted_.try_emplace(out.key, now);
  if (fresh || !reused || now - noted->second >= table_.options().timeout / 2) {
    noted->second = now;
    out.note = true;
  }
  return out;
}

void SharedPersistence::Adopt(uint32_t key, uint64_t backend_key, TimePoint expiry, TimePoint now) {
  std::lock_guard lock(mu_);
  table_.Adopt(key, backend_key, expiry, now);
  // What a peer sent needs no note back until half a timeout of use here.
  if (table_.Lookup(key, now)) noted_.insert_or_assign(key & table_.options().netmask, now);
}

std::shared_ptr<SharedPersistence> MakeSharedPersistence(vservice::Family family,
                                                         const vservice::Persistence& p,
                                                         bool expire_quiescent) {
  sched::PersistenceOptions po;
  po.timeout = std::chrono::seconds(p.timeout_s);
  po.expire_quiescent = expire_quiescent;
  const int prefix = family == vservice::Family::kV4 ? p.prefix_len : 32;
  po.netmask = prefix == 0 ? 0 : ~uint32_t{0} << (32 - prefix);
  return std::make_shared<SharedPersistence>(po);
}

size_t SharedPersistence::size() const {
  std::lock_guard lock(mu_);
  return table_.size();
}

void SharedPersistence::SweepLocked(TimePoint now) {
  if (++picks_since_sweep_ < 1024) return;
  picks_since_sweep_ = 0;
  table_.Expire(now);
  if (noted_.size() <= table_.size()) return;
  std::erase_if(noted_, [&](const auto& kv) { return !table_.Lookup(kv.first, now); });
}

}  // namespace vsc::director
