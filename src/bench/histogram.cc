#include "bench/histogram.h"

#include <algorithm>
#include <bit>
#include <cmath>

namespace vsc::bench {

Histogram::Histogram() : counts_(kBuckets, 0) {}

size_t Histogram::BucketOf(uint64_t ns) {
  if (ns > kMaxTrackable) ns = kMaxTrackable;
  if (ns < kSubBuckets) return static_cast<size_t>(ns);
  // For ns in [2^e, 2^(e+1)), group e-6 holds its top 8 bits (128..255) as 128 sub-buckets.
  const int e = std::bit_width(ns) - 1;
  const int shift = e - kSubBucketBits;
  const uint64_t mantissa = ns >> shift;  // in [128, 256)
  return static_cast<size_t>((shift + 1) * kSubBuckets + (mantissa - kSubBuckets));
}

uint64_t Histogram::BucketLow(size_t bucket) {
  if (bucket < kSubBuckets) return bucket;
  const size_t group = bucket / kSubBuckets;  // = shift + 1
  const uint64_t mantissa = kSubBuckets + bucket % kSubBuckets;
  return mantissa << (group - 1);
}

uint64_t Histogram::BucketWidth(size_t bucket) {
  if (bucket < kSubBuckets) return 1;
  return uint64_t{1} << (bucket / kSubBuckets - 1);
}

void Histogram::Record(uint64_t ns) {
  ++counts_[BucketOf(ns)];
  ++count_;
  min_ = std::min(min_, ns);
  max_ = std::max(max_, ns);
  sum_ += static_cast<double>(ns);
}

void Histogram::Merge(const Histogram& other) {
  for (size_t i = 0; i < kBuckets; ++i) counts_[i] += other.counts_[i];
  count_ += other.count_;
  min_ = std::min(min_, other.min_);
  max_ = std::max(max_, other.max_);
  sum_ += other.sum_;
}

void Histogram::Reset() {
  std::fill(counts_.begin(), counts_.end(), 0);
  count_ = 0;
  min_ = UINT64_MAX;
  max_ = 0;
  sum_ = 0;
}

uint64_t Histogram::Percentile(double p) const {
  if (count_ == 0) return 0;
  p = std::clamp(p, 0.0, 100.0);
  // The epsilon keeps p = 99.9 of 1000 samples at rank 999 despite 99.9/100 rounding up.
  const double exact = p / 100.0 * static_cast<double>(count_);
  const uint64_t rank = std::max<uint64_t>(1, static_cast<uint64_t>(std::ceil(exact - 1e-9)));
  if (rank >= count_) return max_;
  uint64_t seen = 0;
  for (size_t i = 0; i + 1 < kBuckets; ++i) {
    seen += counts_[i];
    if (seen >= rank) {
      const uint64_t mid = BucketLow(i) + BucketWidth(i) / 2;
      return std::clamp(mid, Min(), max_);
    }
  }
  return max_;
}

}  // namespace vsc::bench
