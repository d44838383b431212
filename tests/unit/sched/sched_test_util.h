// Helpers shared by the scheduler tests.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "sched/backend.h"
#include "sched/scheduler.h"

namespace vsc::sched::testing {

inline std::unique_ptr<Scheduler> MakeOrDie(std::string_view name,
                                            const SchedulerOptions& options = {}) {
  auto s = MakeScheduler(name, options);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return std::move(s).value();
}

// Backends with the given weights, keys 1000 + index.
inline std::vector<Backend> WithWeights(const std::vector<uint32_t>& weights) {
  std::vector<Backend> out;
  for (size_t i = 0; i < weights.size(); ++i) {
    Backend b;
    b.key = 1000 + i;
    b.weight = weights[i];
    out.push_back(b);
  }
  return out;
}

// Picks `count` times with client ip = i and returns the picks as letters A, B, C...
inline std::string Letters(Scheduler& s, const std::vector<Backend>& backends, int count) {
  std::string out;
  for (int i = 0; i < count; ++i) {
    auto p = s.Pick(backends, Flow{static_cast<uint32_t>(i), 0});
    out += p ? static_cast<char>('A' + *p) : '-';
  }
  return out;
}

}  // namespace vsc::sched::testing
