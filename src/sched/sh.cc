#include "sched/sh.h"

#include <numeric>

namespace vsc::sched {

void SourceHashScheduler::Rebuild(std::span<const Backend> backends) {
  buckets_.fill(kNoBackend);
  empty_ = backends.empty();
  if (empty_) return;
  uint32_t g = 0;
  for (const Backend& b : backends) g = std::gcd(g, b.weight);
  if (g == 0) g = 1;
  size_t d = 0;
  uint32_t d_count = 0;
  for (uint32_t i = 0; i < kShBuckets; ++i) {
    buckets_[i] = static_cast<uint32_t>(d);
    // "Don't move to next dest until filling weight"; weight 0 moves on after one bucket.
    if (++d_count >= backends[d].weight / g) {
      d = (d + 1) % backends.size();
      d_count = 0;
    }
  }
}

std::optional<size_t> SourceHashScheduler::Pick(std::span<const Backend> backends,
                                                const Flow& flow) {
  if (empty_) return std::nullopt;
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
