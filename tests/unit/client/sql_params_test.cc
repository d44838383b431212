#include "client/sql_params.h"

#include <gtest/gtest.h>

#include <map>

namespace vsc::client {
namespace {

FileReader Files(std::map<std::string, std::string> files) {
  return [files](const std::string& path) -> Result<std::string> {
    auto it = files.find(path);
    if (it == files.end()) return NotFound("no file " + path);
    return it->second;
  };
}

proto::SqlValue Parse(std::string_view arg) {
  auto v = ParseParam(arg, Files({{"data.bin", std::string("\0\x01\xff", 3)}, {"empty", ""}}));
  EXPECT_TRUE(v.ok()) << arg << ": " << v.status().ToString();
  return v.ok() ? *v : proto::SqlValue();
}

std::string Refused(std::string_view arg) {
  auto v = ParseParam(arg, Files({}));
  EXPECT_FALSE(v.ok()) << arg << " was taken";
  return v.ok() ? "" : v.status().message();
}

TEST(SqlParamsTest, BareValuesAreIntegersRealsNullOrText) {
  EXPECT_EQ(Parse("42").integer(), 42);
  EXPECT_EQ(Parse("-7").integer(), -7);
  EXPECT_EQ(Parse("9223372036854775807").integer(), INT64_MAX);
  EXPECT_EQ(Parse("9223372036854775808").value_case(), proto::SqlValue::kReal);  // past int64
  EXPECT_DOUBLE_EQ(Parse("1.5").real(), 1.5);
  EXPECT_DOUBLE_EQ(Parse("2e3").real(), 2000);
  EXPECT_EQ(Parse("null").value_case(), proto::SqlValue::kNull);
  EXPECT_EQ(Parse("NULL").text(), "NULL");  // only the exact word is NULL
  EXPECT_EQ(Parse("hello world").text(), "hello world");
  EXPECT_EQ(Parse("").text(), "");
  EXPECT_EQ(Parse(" 1").text(), " 1");  // not a number: spaces are kept
  EXPECT_EQ(Parse("inf").text(), "inf");
  EXPECT_EQ(Parse("nan").text(), "nan");
  EXPECT_EQ(Parse("0x10").text(), "0x10");
  EXPECT_EQ(Parse("1e999").text(), "1e999");    // not finite
  EXPECT_EQ(Parse("node:7").text(), "node:7");  // an unknown prefix is text
  EXPECT_EQ(Parse("h\xc3\xa9").text(), "h\xc3\xa9");
}

TEST(SqlParamsTest, TypedPrefixesForceTheType) {
  EXPECT_EQ(Parse("text:42").text(), "42");
  EXPECT_EQ(Parse("text:null").text(), "null");
  EXPECT_EQ(Parse("text:@x").text(), "@x");
  EXPECT_EQ(Parse("text:").text(), "");
  EXPECT_EQ(Parse("text:int:5").text(), "int:5");
  EXPECT_EQ(Parse("int:-12").integer(), -12);
  EXPECT_DOUBLE_EQ(Parse("real:3").real(), 3.0);
  EXPECT_EQ(Parse("real:3").value_case(), proto::SqlValue::kReal);
  EXPECT_DOUBLE_EQ(Parse("real:-0.25").real(), -0.25);
  EXPECT_EQ(Parse("hex:00ff10").blob(), std::string("\0\xff\x10", 3));
  EXPECT_EQ(Parse("hex:ABcd").blob(), "\xab\xcd");
  EXPECT_EQ(Parse("hex:").value_case(), proto::SqlValue::kBlob);
  EXPECT_EQ(Parse("hex:").blob(), "");
}

TEST(SqlParamsTest, AtNamesAFileAndADoubledAtIsText) {
  EXPECT_EQ(Parse("@data.bin").blob(), std::string("\0\x01\xff", 3));
  EXPECT_EQ(Parse("@empty").value_case(), proto::SqlValue::kBlob);
  EXPECT_EQ(Parse("@@data.bin").text(), "@data.bin");
  EXPECT_EQ(Parse("@@").text(), "@");
  EXPECT_NE(Refused("@missing").find("no file missing"), std::string::npos);
  EXPECT_NE(Refused("@").find("write @@ or text:@"), std::string::npos);
}

TEST(SqlParamsTest, BadValuesAreRefusedWithWhatToWrite) {
  EXPECT_NE(Refused("int:1.5").find("not an integer"), std::string::npos);
  EXPECT_NE(Refused("int:").find("not an integer"), std::string::npos);
  EXPECT_NE(Refused("int:99999999999999999999").find("within 64 bits"), std::string::npos);
  EXPECT_NE(Refused("real:abc").find("not a finite decimal number"), std::string::npos);
  EXPECT_NE(Refused("real:inf").find("not a finite"), std::string::npos);
  EXPECT_NE(Refused("hex:abc").find("even number of hex digits"), std::string::npos);
  EXPECT_NE(Refused("hex:zz").find("hex digits"), std::string::npos);
  EXPECT_NE(Refused("\xff\xfe").find("not valid UTF-8"), std::string::npos);
  EXPECT_NE(Refused("text:\xc3").find("@FILE"), std::string::npos);
}

TEST(SqlParamsTest, TheDiskReaderReadsBytesAndRefusesLargeFiles) {
  const std::string path = ::testing::TempDir() + "/sql_params_test.bin";
  {
    FILE* f = std::fopen(path.c_str(), "wb");
    ASSERT_NE(f, nullptr);
    std::fwrite("a\0b\n", 1, 4, f);
    std::fclose(f);
  }
  auto v = ParseParam("@" + path, DiskFileReader(4));
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_EQ(v->blob(), std::string("a\0b\n", 4));
  auto big = ParseParam("@" + path, DiskFileReader(3));
  ASSERT_FALSE(big.ok());
  EXPECT_NE(big.status().message().find("4 bytes is over the 3"), std::string::npos);
  auto missing = ParseParam("@" + path + ".none", DiskFileReader(10));
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("cannot open the file"), std::string::npos);
  std::remove(path.c_str());
}

}  // namespace
}  // namespace vsc::client
