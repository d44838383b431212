#include "common/file_text.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "support/temp_dir.h"

namespace vsc {
namespace {

TEST(FileTextTest, ReadsAWholeFileBeyondOneBuffer) {
  test_support::TempDir dir;
  std::string big(10000, 'x');
  big += "\nend\n";
  std::ofstream(dir.File("big.txt")) << big;
  auto text = ReadFileText(dir.File("big.txt"));
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  EXPECT_EQ(*text, big);
}

TEST(FileTextTest, ReadsProcFilesThatStatAsEmpty) {
  auto text = ReadFileText("/proc/self/stat");
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  EXPECT_EQ(text->substr(0, text->find(' ')), std::to_string(::getpid()));
  auto fields = ProcStatFields(*text);
  ASSERT_TRUE(fields.ok()) << fields.status().ToString();
  EXPECT_EQ(fields->front(), 'R') << "the reading thread is running";
}

TEST(FileTextTest, MissingIsNotFoundAndADirectoryIsAnIoError) {
  test_support::TempDir dir;
  auto missing = ReadFileText(dir.File("absent"));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), Code::kNotFound);
  EXPECT_EQ(missing.status().message(),
            "cannot read " + dir.File("absent") + ": No such file or directory");
  auto directory = ReadFileText(dir.path());
  ASSERT_FALSE(directory.ok());
  EXPECT_EQ(directory.status().code(), Code::kIo);
  EXPECT_NE(directory.status().message().find("Is a directory"), std::string::npos);
}

TEST(FileTextTest, WriteReplacesTheWholeContentAndSaysWhyItCannot) {
  test_support::TempDir dir;
  const std::string f = dir.File("w.txt");
  ASSERT_TRUE(WriteFileText(f, "a longer first text\n").ok());
  ASSERT_TRUE(WriteFileText(f, "short").ok());
  EXPECT_EQ(*ReadFileText(f), "short");
  const Status refused = WriteFileText(dir.File("no-such-dir/w.txt"), "x");
  EXPECT_EQ(refused.code(), Code::kIo);
  EXPECT_EQ(refused.message(),
            "cannot write " + dir.File("no-such-dir/w.txt") + ": No such file or directory");
}

TEST(FileTextTest, StatFieldsStartAfterTheLastParenthesis) {
  EXPECT_EQ(*ProcStatFields("1 (init) S 0 1"), "S 0 1");
  EXPECT_EQ(*ProcStatFields("9 (a) b (c)) D 1 9"), "D 1 9");
  EXPECT_FALSE(ProcStatFields("9 init S").ok());
  EXPECT_FALSE(ProcStatFields("9 (init)").ok());
  EXPECT_FALSE(ProcStatFields("9 (init)x S").ok());
}

}  // namespace
}  // namespace vsc
