#include "sched/wrr.h"

#include <algorithm>
#include <cstdlib>
#include <numeric>

namespace vsc::sched {
namespace {
constexpr size_t kHead = static_cast<size_t>(-1);
}  // namespace

std::shared_ptr<const SchedTable> WeightedRoundRobinScheduler::BuildTable(
    std::span<const Backend> backends) const {
  int64_t g = 0;
  int64_t max_weight = 0;
  for (const Backend& b : backends) {
    if (b.weight == 0) continue;
    g = std::gcd(g, static_cast<int64_t>(b.weight));
    max_weight = std::max(max_weight, static_cast<int64_t>(b.weight));
  }
  auto table = std::make_shared<WrrTable>();
  table->di = g > 0 ? g : 1;
  // LVS subtracts (gcd - 1) so that the last pass of a cycle runs with cw == 1.
  table->mw = max_weight - (table->di - 1);
  return table;
}

void WeightedRoundRobinScheduler::Adopt(std::shared_ptr<const SchedTable> table,
                                        std::span<const Backend> backends) {
  table_ = std::dynamic_pointer_cast<const WrrTable>(table);
  if (!table_) std::abort();  // a table built by another scheduler
  di_ = table_->di;
  mw_ = table_->mw;
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
  // A pick that finds nobody leaves the rotation where it was, so an outage does not shift the
  // cycle the servers see when they come back.
  const int64_t cw_at_entry = cw_;
  size_t i = last_;
  bool full_pass = (i == kHead);  // the current pass started at index 0
  uint32_t max_usable = 0;        // largest weight among usable servers seen in this pass
  // A fruitless full pass shortens the walk to O(n) per pick below, so this budget is only a
  // guard against weights that changed without a Rebuild.
  const int64_t budget = (mw_ / di_ + 3) * static_cast<int64_t>(n);
  for (int64_t step = 0; step < budget; ++step) {
    if (i == kHead) {
      i = 0;  // the very first pass starts at cw = mw without a decrement
    } else if (i + 1 >= n) {
      if (full_pass) {
        if (max_usable == 0) {
          cw_ = cw_at_entry;
          return std::nullopt;
        }
        // Nobody usable reaches cw: the passes until cw drops to max_usable would pick
        // nothing (LVS walks them; with one big server down that is thousands of passes).
        // Jump to the first cw of the sequence that someone can meet; same picks, O(n).
        const int64_t target = cw_ - di_;
        if (target > static_cast<int64_t>(max_usable)) {
          const int64_t k = (target - max_usable + di_ - 1) / di_;
          cw_ -= k * di_;
          if (cw_ - di_ <= 0) cw_ = static_cast<int64_t>(max_usable) + di_;  // weights off-grid
        }
      }
      // Walking off the end of the list starts the next pass with a lower current weight.
      i = 0;
      cw_ -= di_;
      if (cw_ <= 0) cw_ = mw_;
      full_pass = true;
      max_usable = 0;
    } else {
      ++i;
    }
    const Backend& b = backends[i];
    if (!CanTakeNewWork(b)) continue;
    max_usable = std::max(max_usable, b.weight);
    if (static_cast<int64_t>(b.weight) >= cw_) {
      last_ = i;
      return i;
    }
  }
  cw_ = cw_at_entry;
  return std::nullopt;
}

}  // namespace vsc::sched
