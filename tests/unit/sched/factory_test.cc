#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "sched_test_util.h"

namespace vsc::sched {
namespace {

TEST(Factory, EveryListedNameMakesASchedulerOfThatName) {
  const std::vector<std::string_view> expected = {"rr",  "wrr", "sh", "lc", "wlc",
                                                  "sed", "nq",  "ll", "mh", "dwlc"};
  ASSERT_EQ(SchedulerNames().size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(SchedulerNames()[i], expected[i]);
    auto s = MakeScheduler(expected[i]);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    EXPECT_EQ((*s)->name(), expected[i]);
  }
}

TEST(Factory, UnknownNameIsInvalidArgumentListingTheValidNames) {
  auto s = MakeScheduler("lblc");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), Code::kInvalidArgument);
  EXPECT_NE(s.status().message().find("lblc"), std::string::npos);
  for (std::string_view n : SchedulerNames()) {
    EXPECT_NE(s.status().message().find(std::string(n)), std::string::npos) << n;
  }
  EXPECT_FALSE(MakeScheduler("").ok());
  EXPECT_FALSE(MakeScheduler("RR").ok());
}

TEST(Factory, MaglevTableSizeMustBePrimeAndInRange) {
  for (uint32_t bad : {0u, 1u, 4u, 65536u, 65535u, 100u, (1u << 24) + 43u}) {
    SchedulerOptions o;
    o.mh_table_size = bad;
    auto s = MakeScheduler("mh", o);
    ASSERT_FALSE(s.ok()) << bad;
    EXPECT_EQ(s.status().code(), Code::kInvalidArgument);
  }
  for (uint32_t good : {7u, 251u, 4093u, 65537u, 655373u}) {
    SchedulerOptions o;
    o.mh_table_size = good;
    EXPECT_TRUE(MakeScheduler("mh", o).ok()) << good;
  }
}

TEST(Factory, DwlcReferenceMustBePositiveAndFinite) {
  for (double bad : {0.0, -700.0, 1e300 * 1e300, std::nan("")}) {
    SchedulerOptions o;
    o.dwlc_reference_ms = bad;
    EXPECT_FALSE(MakeScheduler("dwlc", o).ok()) << bad;
  }
  SchedulerOptions o;
  o.dwlc_reference_ms = 250;
  EXPECT_TRUE(MakeScheduler("dwlc", o).ok());
}

TEST(Factory, EverySchedulerHandlesAnEmptyView) {
  for (std::string_view n : SchedulerNames()) {
    auto s = testing::MakeOrDie(n);
    s->Rebuild({});
    EXPECT_EQ(s->Pick({}, Flow{1, 1}), std::nullopt) << n;
  }
}

}  // namespace
}  // namespace vsc::sched
