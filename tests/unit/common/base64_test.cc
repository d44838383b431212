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

TEST(Base64Test, DecodesWhatItEncodesAndRefusesMalformedText) {
  for (const char* v : {"", "f", "fo", "foo", "foob", "fooba", "foobar"}) {
    auto got = Base64Decode(Base64Encode(v));
    ASSERT_TRUE(got.ok()) << v;
    EXPECT_EQ(*got, v);
  }
  std::string every;
  for (int b = 0; b < 256; ++b) every.push_back(static_cast<char>(b));
  for (size_t n = 0; n <= every.size(); n += 37) {
    auto got = Base64Decode(Base64Encode(every.substr(0, n)));
    ASSERT_TRUE(got.ok()) << n;
    EXPECT_EQ(*got, every.substr(0, n));
  }
  EXPECT_EQ(*Base64Decode("L3ZzY2x1c3Rlci9jL3NlcXVlbmNlcg=="), "/vscluster/c/sequencer");
  // Padding may be left out (HTTP basic auth from some clients), never half written.
  EXPECT_EQ(*Base64Decode("Zg"), "f");
  EXPECT_EQ(*Base64Decode("Zm8"), "fo");
  for (const char* bad :
       {"Z", "Zg=", "Z===", "Zh==", "Zm9=", "Zm9v!A==", "Zg==Zg==", "=Zg=", "Zm9vY"}) {
    auto got = Base64Decode(bad);
    EXPECT_FALSE(got.ok()) << bad;
    if (!got.ok()) {
      EXPECT_NE(got.status().message().find("base64"), std::string::npos);
    }
  }
}

}  // namespace
}  // namespace vsc
