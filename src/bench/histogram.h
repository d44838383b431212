// Histogram: an HDR-style log-linear histogram of latencies in nanoseconds.
//
// Values below 128 ns are counted exactly; above, each power of two is split into 128 equal
// buckets, so a bucket is at most 1/128 of its value wide and a reported percentile (the
// bucket's midpoint) is within 0.4 % of a true sample. Values up to kMaxTrackable (about 68.7 s,
// which covers the 1 us .. 60 s range a lookup can take) are bucketed; larger values are counted
// in the top bucket, a percentile that lands there reports Max(), and Max() is always exact. Memory is fixed (kBuckets counters,
// about 30 KB), allocated once at construction.
//
// Not thread safe: give each thread its own Histogram and Merge() them when reading.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace vsc::bench {

class Histogram {
 public:
  static constexpr int kSubBucketBits = 7;
  static constexpr uint64_t kSubBuckets = uint64_t{1} << kSubBucketBits;  // 128
  static constexpr int kMaxExponent = 35;  // values < 2^36 ns (68.7 s) are bucketed
  static constexpr uint64_t kMaxTrackable = (uint64_t{1} << (kMaxExponent + 1)) - 1;
  static constexpr size_t kBuckets = (kMaxExponent - kSubBucketBits + 2) * kSubBuckets;

  Histogram();

  void Record(uint64_t ns);
  void Merge(const Histogram& other);
  void Reset();

  uint64_t Count() const { return count_; }
  uint64_t Min() const { return count_ == 0 ? 0 : min_; }
  uint64_t Max() const { return max_; }
  double Mean() const { return count_ == 0 ? 0.0 : sum_ / static_cast<double>(count_); }
  // The value at percentile p in [0, 100]: the smallest recorded value v such that at least p %
  // of the samples are <= v, to the histogram's precision (clamped to [Min(), Max()]). 0 when
  // empty.
  uint64_t Percentile(double p) const;

  // Bucket arithmetic, exposed for tests.
  static size_t BucketOf(uint64_t ns);
  static uint64_t BucketLow(size_t bucket);
  static uint64_t BucketWidth(size_t bucket);

 private:
  std::vector<uint64_t> counts_;
  uint64_t count_ = 0;
  uint64_t min_ = UINT64_MAX;
  uint64_t max_ = 0;
  double sum_ = 0;  // a double: nanosecond sums over long runs overflow 64 bits
};

}  // namespace vsc::bench
