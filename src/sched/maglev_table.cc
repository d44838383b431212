#include "sched/maglev_table.h"

#include <algorithm>

namespace vsc::sched {
namespace {

constexpr uint32_t kEmpty = UINT32_MAX;

}  // namespace

bool IsPrime(uint32_t m) {
  if (m < 2) return false;
  for (uint64_t d = 2; d * d <= m; ++d) {
    if (m % d == 0) return false;
  }
  return true;
}

std::vector<uint32_t> BuildMaglevTable(std::span<const MaglevPermutation> backends, uint32_t m) {
  uint64_t max_weight = 0;
  for (const MaglevPermutation& p : backends) max_weight = std::max<uint64_t>(max_weight, p.weight);
  if (m == 0 || max_weight == 0 || !IsPrime(m)) return {};

  std::vector<uint32_t> table(m, kEmpty);
  std::vector<uint32_t> next(backends.size());  // current position in each permutation
  std::vector<uint64_t> credit(backends.size(), 0);
  for (size_t i = 0; i < backends.size(); ++i) {
    next[i] = backends[i].offset % m;
  }
  uint32_t filled = 0;
  while (true) {
    for (size_t i = 0; i < backends.size(); ++i) {
      const MaglevPermutation& p = backends[i];
      if (p.weight == 0) continue;
      credit[i] += p.weight;
      if (credit[i] < max_weight) continue;
      credit[i] -= max_weight;
      const uint32_t skip = (p.skip % m == 0) ? 1 : p.skip % m;
      uint64_t c = next[i];
      // Terminates: the permutation visits every slot and at least one is still empty.
      while (table[c] != kEmpty) {
        c += skip;
        if (c >= m) c -= m;
      }
      table[c] = static_cast<uint32_t>(i);
      c += skip;
      if (c >= m) c -= m;
      next[i] = static_cast<uint32_t>(c);
      if (++filled == m) return table;
    }
  }
}

}  // namespace vsc::sched
