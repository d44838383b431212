#include "common/base64.h"

#include <gtest/gtest.h>

namespace vsc {
namespace {

TEST(Base64Test, EncodesTheRfc4648VectorsAndEveryByte) {
  EXPECT_EQ(Base64Encode(""), "");
  EXPECT_EQ(Base64Encode("f"), "Zg==");
  EXPECT_EQ(Base64Encode("fo"), "Zm8=");
  EXPECT_EQ(Base64Encode("foo"), "Zm9v");
  EXPECT_EQ(Base64Encode("foob"), "Zm9vYg==");
  EXPECT_EQ(Base64Encode("fooba"), "Zm9vYmE=");
  EXPECT_EQ(Base64Encode("foobar"), "Zm9vYmFy");
  EXPECT_EQ(Base64Encode(std::string("\0\xff\xfe", 3)), "AP/+");
}

}  // namespace
}  // namespace vsc
