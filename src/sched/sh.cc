#include "sched/sh.h"

#include <cstdlib>
#include <numeric>

namespace vsc::sched {

std::shared_ptr<const SchedTable> SourceHashScheduler::BuildTable(
    std::span<const Backend> backends) const {
  auto table = std::make_shared<ShTable>();
  auto& buckets = table->buckets;
  buckets.fill(kNoBackend);
  table->empty = backends.empty();
  if (table->empty) return table;
  uint32_t g = 0;
  for (const Backend& b : backends) g = std::gcd(g, b.weight);
  if (g == 0) g = 1;
  size_t d = 0;
  uint32_t d_count = 0;
  for (uint32_t i = 0; i < kShBuckets; ++i) {
    buckets[i] = static_cast<uint32_t>(d);
    // "Don't move to next dest until filling weight"; weight 0 moves on after one bucket.
    if (++d_count >= backends[d].weight / g) {
      d = (d + 1) % backends.size();
      d_count = 0;
    }
  }
  return table;
}

void SourceHashScheduler::Adopt(std::shared_ptr<const SchedTable> table,
                                std::span<const Backend> /*backends*/) {
  table_ = std::dynamic_pointer_cast<const ShTable>(table);
  if (!table_) std::abort();  // a table built by another scheduler
}

std::optional<size_t> SourceHashScheduler::Pick(std::span<const Backend> backends,
                                                const Flow& flow) {
  if (table_->empty) return std::nullopt;
  const auto& buckets_ = table_->buckets;
  const uint32_t hash = ShBucket(flow.client_ip);
  auto usable = [&](uint32_t bucket) {
    const uint32_t d = buckets_[bucket];
    return d < backends.size() && CanTakeNewWork(backends[d]);
  };
  if (usable(hash)) return buckets_[hash];
  for (uint32_t offset = 0; offset < kShBuckets; ++offset) {
    const uint32_t roffset = (hash + offset) & (kShBuckets - 1);
    const uint32_t bucket = (hash + roffset) & (kShBuckets - 1);
    if (usable(bucket)) return buckets_[bucket];
  }
  // More than 256 backends leaves some without a bucket; they may still be the only live ones.
  for (size_t i = 0; i < backends.size(); ++i) {
    if (CanTakeNewWork(backends[i])) return i;
  }
  return std::nullopt;
}

}  // namespace vsc::sched
