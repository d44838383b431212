#include "common/status.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <string>

namespace vsc {
namespace {

Result<int> Half(int x) {
  if (x % 2 != 0) return InvalidArgument(std::to_string(x) + " is odd");
  return x / 2;
}

Result<int> Quarter(int x) {
  VSC_ASSIGN_OR_RETURN(int h, Half(x));
  return Half(h);
}

Status CheckPositive(int x) {
  if (x <= 0) return InvalidArgument("not positive");
  return Status::Ok();
}

Status Both(int a, int b) {
  VSC_RETURN_IF_ERROR(CheckPositive(a));
  VSC_RETURN_IF_ERROR(CheckPositive(b));
  return Status::Ok();
}

TEST(StatusTest, OkByDefault) {
  Status s;
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.ToString(), "ok");
}

TEST(StatusTest, CarriesCodeAndMessage) {
  Status s = ResourceExhausted("update queue full (1024 entries)");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), Code::kResourceExhausted);
  EXPECT_EQ(s.ToString(), "overloaded: update queue full (1024 entries)");
  EXPECT_EQ(s.Annotate("write").ToString(), "overloaded: write: update queue full (1024 entries)");
}

TEST(StatusTest, ErrnoStatusNamesTheCall) {
  Status s = ErrnoStatus("bind 127.0.0.1:1", EADDRINUSE);
  EXPECT_EQ(s.code(), Code::kIo);
  EXPECT_NE(s.message().find("bind 127.0.0.1:1"), std::string::npos);
  EXPECT_NE(s.message().find("in use"), std::string::npos);
}

TEST(ResultTest, ValueOrStatus) {
  auto q = Quarter(8);
  ASSERT_TRUE(q.ok());
  EXPECT_EQ(*q, 2);
  auto bad = Quarter(6);  // 6/2 = 3 is odd
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "3 is odd");
  EXPECT_TRUE(Both(1, 2).ok());
  EXPECT_FALSE(Both(1, -2).ok());
}

TEST(ResultDeathTest, ValueOfFailedResultAborts) {
  auto bad = Half(3);
  EXPECT_DEATH((void)bad.value(), "");
}

}  // namespace
}  // namespace vsc
