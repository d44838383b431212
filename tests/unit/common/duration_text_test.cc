#include "common/duration_text.h"

#include <gtest/gtest.h>

namespace vsc {
namespace {

TEST(DurationTextTest, BareNumbersAreInTheNamedUnit) {
  EXPECT_EQ(*ParseDuration("250", DurationUnit::kMillis), 250);
  EXPECT_EQ(*ParseDuration("30", DurationUnit::kSeconds), 30);
}

TEST(DurationTextTest, AnExplicitUnitWins) {
  EXPECT_EQ(*ParseDuration("2s", DurationUnit::kMillis), 2000);
  EXPECT_EQ(*ParseDuration("1.5s", DurationUnit::kMillis), 1500);
  EXPECT_EQ(*ParseDuration("1m", DurationUnit::kSeconds), 60);
  EXPECT_EQ(*ParseDuration("3000ms", DurationUnit::kSeconds), 3);
  EXPECT_EQ(*ParseDuration("0ms", DurationUnit::kMillis), 0);
}

TEST(DurationTextTest, ErrorsSayWhatIsWrong) {
  for (const char* bad : {"", "s", "ms", "abc", "-1s", "2 s", "1h", "nan", "inf", "1e400s"}) {
    auto r = ParseDuration(bad, DurationUnit::kMillis);
    EXPECT_FALSE(r.ok()) << bad;
  }
  auto frac = ParseDuration("1500ms", DurationUnit::kSeconds);
  ASSERT_FALSE(frac.ok());
  EXPECT_NE(frac.status().message().find("whole number of seconds"), std::string::npos);
  auto word = ParseDuration("soon", DurationUnit::kMillis);
  ASSERT_FALSE(word.ok());
  EXPECT_NE(word.status().message().find("examples: 250ms, 2s, 1m"), std::string::npos);
}

TEST(DurationTextTest, NamesCarryTheirUnit) {
  DurationUnit u;
  ASSERT_TRUE(DurationUnitOfName("read_timeout_ms", &u));
  EXPECT_EQ(u, DurationUnit::kMillis);
  ASSERT_TRUE(DurationUnitOfName("--timeout-s", &u));
  EXPECT_EQ(u, DurationUnit::kSeconds);
  EXPECT_FALSE(DurationUnitOfName("records", &u));
  EXPECT_FALSE(DurationUnitOfName("listen", &u));
}

}  // namespace
}  // namespace vsc
