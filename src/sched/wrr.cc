#include "sched/wrr.h"

#include <algorithm>
#include <numeric>

namespace vsc::sched {
namespace {
constexpr size_t kHead = static_cast<size_t>(-1);
}  // namespace

void WeightedRoundRobinScheduler::Rebuild(std::span<const Backend> backends) {
  int64_t g = 0;
  int64_t max_weight = 0;
  for (const Backend& b : backends) {
    if (b.weight == 0) continue;
    g = std::gcd(g, static_cast<int64_t>(b.weight));
    max_weight = std::max(max_weight, static_cast<int64_t>(b.weight));
  }
  di_ = g > 0 ? g : 1;
  // LVS subtracts (gcd - 1) so that the last pass of a cycle runs with cw == 1.
  mw_ = max_weight - (di_ - 1);
  // LVS ip_vs_wrr_dest_changed(): continue the cycle where it is, snapped to the new gcd.
  if (cw_ > mw_ || cw_ <= 0) {
    cw_ = mw_;
  } else if (di_ > 1) {
    cw_ = (cw_ / di_) * di_ + 1;
  }
  if (last_ != kHead && last_ >= backends.size()) {
    last_ = kHead;
  }
}

std::optional<size_t> WeightedRoundRobinScheduler::Pick(std::span<const Backend> backends,
                                                        const Flow& /*flow*/) {
  const size_t n = backends.size();
  if (n == 0 || mw_ <= 0) return std::nullopt;
  // One full cycle visits every (position, cw) pair; if nothing qualified in it nothing will.
  const int64_t passes = mw_ / di_ + 2;
  const int64_t budget = passes * static_cast<int64_t>(n);
  size_t i = last_;
  bool checked_any = false;
  for (int64_t step = 0; step < budget; ++step) {
    if (i == kHead) {
      i = 0;  // the very first pass starts at cw = mw without a decrement
    } else if (i + 1 >= n) {
      // Walking off the end of the list starts the next pass with a lower current weight.
      i = 0;
      cw_ -= di_;
      if (cw_ <= 0) cw_ = mw_;
    } else {
      ++i;
    }
    const Backend& b = backends[i];
    if (CanTakeNewWork(b) && static_cast<int64_t>(b.weight) >= cw_) {
      last_ = i;
      return i;
    }
    // A long fruitless walk usually means everyone is down; check once so that case costs
    // O(n) instead of a full weight cycle.
    if (!checked_any && step >= static_cast<int64_t>(n)) {
      checked_any = true;
      if (std::none_of(backends.begin(), backends.end(), CanTakeNewWork)) return std::nullopt;
    }
  }
  return std::nullopt;
}

}  // namespace vsc::sched
