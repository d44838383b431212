#include "bench/histogram.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "common/random.h"

namespace vsc::bench {
namespace {

// Log-uniform latencies from 1 us to 60 s, the range the bench records.
std::vector<uint64_t> LogUniform(Random& rng, size_t n) {
  std::vector<uint64_t> v(n);
  const double lo = std::log(1e3), hi = std::log(60e9);
  for (auto& x : v) x = static_cast<uint64_t>(std::exp(lo + (hi - lo) * rng.NextDouble()));
  return v;
}

uint64_t ExactPercentile(std::vector<uint64_t> sorted, double p) {
  std::sort(sorted.begin(), sorted.end());
  const double exact = p / 100.0 * static_cast<double>(sorted.size());
  const uint64_t rank = std::max<uint64_t>(1, static_cast<uint64_t>(std::ceil(exact - 1e-9)));
  return sorted[rank - 1];
}

TEST(HistogramTest, BucketsCoverEveryValueWithinOnePercent) {
  Random rng(1);
  for (int i = 0; i < 200000; ++i) {
    const uint64_t v = rng.Next() >> (28 + rng.Uniform(36));  // up to 2^36 - 1
    const size_t b = Histogram::BucketOf(v);
    ASSERT_LT(b, Histogram::kBuckets);
    ASSERT_LE(Histogram::BucketLow(b), v);
    ASSERT_LT(v, Histogram::BucketLow(b) + Histogram::BucketWidth(b));
    ASSERT_LE(static_cast<double>(Histogram::BucketWidth(b)),
              std::max(1.0, static_cast<double>(v) / 128.0));
  }
  // Bucket boundaries are contiguous: each bucket starts where the previous one ends.
  for (size_t b = 1; b < Histogram::kBuckets; ++b) {
    ASSERT_EQ(Histogram::BucketLow(b), Histogram::BucketLow(b - 1) + Histogram::BucketWidth(b - 1))
        << b;
  }
  EXPECT_EQ(Histogram::BucketOf(Histogram::kMaxTrackable), Histogram::kBuckets - 1);
}

TEST(HistogramTest, PercentilesMatchASortedArrayWithinPrecision) {
  Random rng(2);
  for (size_t n : {1u, 2u, 7u, 1000u, 100000u}) {
    const std::vector<uint64_t> data = LogUniform(rng, n);
    Histogram h;
    for (uint64_t v : data) h.Record(v);
    ASSERT_EQ(h.Count(), n);
    for (double p : {0.0, 1.0, 10.0, 25.0, 50.0, 75.0, 90.0, 99.0, 99.9, 99.99, 100.0}) {
      const double exact = static_cast<double>(ExactPercentile(data, p));
      const double got = static_cast<double>(h.Percentile(p));
      EXPECT_LE(std::abs(got - exact), exact * 0.01) << "n " << n << " p " << p;
    }
    EXPECT_EQ(h.Max(), *std::max_element(data.begin(), data.end()));
    EXPECT_EQ(h.Min(), *std::min_element(data.begin(), data.end()));
    double sum = 0;
    for (uint64_t v : data) sum += static_cast<double>(v);
    EXPECT_NEAR(h.Mean(), sum / static_cast<double>(n), sum / static_cast<double>(n) * 1e-9);
  }
}

TEST(HistogramTest, MergedHistogramsEqualOneHistogramOfEverything) {
  Random rng(3);
  const std::vector<uint64_t> data = LogUniform(rng, 50000);
  Histogram whole, parts[4];
  for (size_t i = 0; i < data.size(); ++i) {
    whole.Record(data[i]);
    parts[i % 4].Record(data[i]);
  }
  Histogram merged;
  for (const auto& p : parts) merged.Merge(p);
  EXPECT_EQ(merged.Count(), whole.Count());
  EXPECT_EQ(merged.Max(), whole.Max());
  EXPECT_EQ(merged.Min(), whole.Min());
  EXPECT_NEAR(merged.Mean(), whole.Mean(), whole.Mean() * 1e-12);
  for (double p = 0; p <= 100; p += 0.5) EXPECT_EQ(merged.Percentile(p), whole.Percentile(p)) << p;
}

TEST(HistogramTest, EmptyAndOutOfRangeValues) {
  Histogram h;
  EXPECT_EQ(h.Count(), 0u);
  EXPECT_EQ(h.Percentile(50), 0u);
  EXPECT_EQ(h.Max(), 0u);
  EXPECT_EQ(h.Min(), 0u);
  EXPECT_EQ(h.Mean(), 0.0);
  const uint64_t huge = uint64_t{1} << 40;  // beyond the tracked range
  h.Record(1000);
  h.Record(huge);
  EXPECT_EQ(h.Max(), huge);
  EXPECT_EQ(h.Percentile(100), huge);
  EXPECT_NEAR(static_cast<double>(h.Percentile(50)), 1000.0, 10.0);
  h.Reset();
  EXPECT_EQ(h.Count(), 0u);
  EXPECT_EQ(h.Percentile(99), 0u);
}

}  // namespace
}  // namespace vsc::bench
