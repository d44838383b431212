// sh: source hashing (seed 000 §3.4.2, LVS ip_vs_sh with the sh-fallback flag).
//
// 256 buckets; a client lands in bucket (ip * 2654435761) & 255, in uint32 arithmetic on the
// host-order address (the seed's hash, the pre-hash_32 kernels' hash). Rebuild tiles the buckets
// with the backends in list order, each taking `weight` consecutive buckets per cycle, as
// ip_vs_sh_reassign() does (a weight-0 backend still takes one bucket per cycle, as in LVS).
// We divide the weights by their gcd first: the shares are the same, but weights like 100/200
// then tile 1:2 instead of overrunning 256 buckets with the first server.
//
// When a bucket's backend cannot take new work, the lookup walks the table the way sh-fallback
// does (offset o = 0..255 probes bucket (hash + ((hash + o) & 255)) & 255), so a client always
// falls back to the same server while the view stays the same. Not consistent hashing: a
// Rebuild after a membership change remaps most clients (as in LVS); use mh for that.
#pragma once

#include <array>
#include <cstdint>

#include "sched/scheduler.h"

namespace vsc::sched {

inline constexpr uint32_t kShBuckets = 256;

// The seed's hash: bucket of a host-order IPv4 address.
inline uint32_t ShBucket(uint32_t client_ip) {
  return (client_ip * 2654435761u) & (kShBuckets - 1);
}

// The buckets, shared by every worker's sh scheduler of one view.
struct ShTable final : SchedTable {
  static constexpr uint32_t kNoBackend = UINT32_MAX;
  std::array<uint32_t, kShBuckets> buckets{};  // backend index (kNoBackend when there were none)
  bool empty = true;
};

class SourceHashScheduler final : public Scheduler {
 public:
  std::string_view name() const override { return "sh"; }
  std::shared_ptr<const SchedTable> BuildTable(std::span<const Backend> backends) const override;
  void Adopt(std::shared_ptr<const SchedTable> table, std::span<const Backend> backends) override;
  const SchedTable* table() const override { return table_.get(); }
  std::optional<size_t> Pick(std::span<const Backend> backends, const Flow& flow) override;

  // Backend index of each bucket of the adopted table (kNoBackend when there were none).
  static constexpr uint32_t kNoBackend = ShTable::kNoBackend;
  const std::array<uint32_t, kShBuckets>& buckets() const { return table_->buckets; }

 private:
  std::shared_ptr<const ShTable> table_ = std::make_shared<ShTable>();
};

}  // namespace vsc::sched
