#include "proto/cluster_key.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <filesystem>
#include <fstream>
#include <string>

namespace vsc::proto {
namespace {

constexpr char kHex[] = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";

// A fresh private directory per test, removed afterwards.
class ClusterKeyFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = ::testing::TempDir() + "vsc_key_XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string Write(const std::string& name, const std::string& content, mode_t mode) {
    const std::string path = (dir_ / name).string();
    {
      std::ofstream out(path, std::ios::binary);
      out << content;
    }
    EXPECT_EQ(::chmod(path.c_str(), mode), 0);
    return path;
  }

  std::filesystem::path dir_;
};

TEST(ClusterKeyTest, HexRoundTrip) {
  auto key = ClusterKey::FromHex(kHex);
  ASSERT_TRUE(key.ok()) << key.status().ToString();
  EXPECT_EQ(key->Hex(), kHex);
  for (size_t i = 0; i < ClusterKey::kBytes; ++i) EXPECT_EQ(key->bytes()[i], i);
  std::string upper = kHex;
  for (auto& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  auto from_upper = ClusterKey::FromHex("  " + upper + "\r\n");
  ASSERT_TRUE(from_upper.ok());
  EXPECT_TRUE(*from_upper == *key);
}

TEST(ClusterKeyTest, HexErrorsGiveLengthOrPositionButNeverTheKey) {
  const std::string good = kHex;
  auto short_key = ClusterKey::FromHex(good.substr(0, 63));
  ASSERT_FALSE(short_key.ok());
  EXPECT_EQ(short_key.status().code(), Code::kInvalidArgument);
  EXPECT_NE(short_key.status().message().find("found 63"), std::string::npos);
  EXPECT_FALSE(ClusterKey::FromHex(good + "0").ok());
  EXPECT_FALSE(ClusterKey::FromHex("").ok());
  for (size_t pos = 0; pos < good.size(); ++pos) {
    for (char bad : {'g', 'x', ' ', '-', '\0'}) {
      std::string s = good;
      s[pos] = bad;
      auto key = ClusterKey::FromHex(s);
      if (bad == ' ' && (pos == 0 || pos == good.size() - 1)) {
        // Surrounding whitespace is trimmed, leaving 63 digits.
        EXPECT_NE(key.status().message().find("found 63"), std::string::npos);
        continue;
      }
      ASSERT_FALSE(key.ok()) << pos;
      EXPECT_EQ(key.status().code(), Code::kInvalidArgument);
      EXPECT_NE(key.status().message().find("position " + std::to_string(pos)), std::string::npos)
          << key.status().message();
      EXPECT_EQ(key.status().message().find(good.substr(0, 8)), std::string::npos);
    }
  }
}

TEST(ClusterKeyTest, GenerateGivesDistinctKeys) {
  auto a = ClusterKey::Generate();
  auto b = ClusterKey::Generate();
  ASSERT_TRUE(a.ok());
  ASSERT_TRUE(b.ok());
  EXPECT_FALSE(*a == *b);
  EXPECT_EQ(a->Hex().size(), 64u);
  auto again = ClusterKey::FromHex(a->Hex());
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(*again == *a);
}

TEST(ClusterKeyTest, FromEnv) {
  const char* var = "VSC_TEST_CLUSTER_KEY_PROTO";
  ::unsetenv(var);
  auto unset = ClusterKey::FromEnv(var);
  ASSERT_FALSE(unset.ok());
  EXPECT_EQ(unset.status().code(), Code::kNotFound);
  EXPECT_NE(unset.status().message().find(var), std::string::npos);
  ::setenv(var, "", 1);
  EXPECT_EQ(ClusterKey::FromEnv(var).status().code(), Code::kNotFound);
  ::setenv(var, "abc", 1);
  auto bad = ClusterKey::FromEnv(var);
  EXPECT_EQ(bad.status().code(), Code::kInvalidArgument);
  EXPECT_NE(bad.status().message().find(var), std::string::npos);
  ::setenv(var, kHex, 1);
  auto good = ClusterKey::FromEnv(var);
  ASSERT_TRUE(good.ok());
  EXPECT_EQ(good->Hex(), kHex);
  ::unsetenv(var);
}

TEST_F(ClusterKeyFileTest, WriteThenReadBack) {
  auto key = ClusterKey::Generate();
  ASSERT_TRUE(key.ok());
  const std::string path = (dir_ / "cluster.key").string();
  ASSERT_TRUE(key->WriteFile(path).ok());
  struct stat st;
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  auto loaded = ClusterKey::FromFile(path);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_TRUE(*loaded == *key);
  // Never replaces an existing key.
  auto other = ClusterKey::Generate();
  const Status again = other->WriteFile(path);
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.code(), Code::kAlreadyExists);
  EXPECT_TRUE(*ClusterKey::FromFile(path) == *key);
}

TEST_F(ClusterKeyFileTest, WriteIgnoresAPermissiveUmask) {
  const mode_t old = ::umask(0);
  const std::string path = (dir_ / "k").string();
  const Status s = ClusterKey::Generate()->WriteFile(path);
  ::umask(old);
  ASSERT_TRUE(s.ok());
  struct stat st;
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
}

TEST_F(ClusterKeyFileTest, RefusesFilesOthersCanAccess) {
  for (mode_t mode : {0640, 0604, 0620, 0602, 0610, 0601, 0644, 0666}) {
    const std::string path = Write("open.key", std::string(kHex) + "\n", mode);
    auto key = ClusterKey::FromFile(path);
    ASSERT_FALSE(key.ok()) << std::oct << mode;
    EXPECT_EQ(key.status().code(), Code::kFailedPrecondition);
    EXPECT_NE(key.status().message().find("chmod 600 " + path), std::string::npos)
        << key.status().message();
    EXPECT_EQ(key.status().message().find(kHex), std::string::npos);
  }
  for (mode_t mode : {0600, 0400}) {
    const std::string path = Write("private.key", std::string(kHex) + "\n", mode);
    EXPECT_TRUE(ClusterKey::FromFile(path).ok()) << std::oct << mode;
  }
}

TEST_F(ClusterKeyFileTest, RawAndHexContent) {
  std::string raw(32, '\0');
  for (size_t i = 0; i < raw.size(); ++i) raw[i] = static_cast<char>(i);
  auto from_raw = ClusterKey::FromFile(Write("raw.key", raw, 0600));
  ASSERT_TRUE(from_raw.ok()) << from_raw.status().ToString();
  EXPECT_EQ(from_raw->Hex(), kHex);
  // Raw keys may end in bytes that look like whitespace; they are not trimmed.
  std::string raw_ws(32, '\n');
  auto from_ws = ClusterKey::FromFile(Write("ws.key", raw_ws, 0600));
  ASSERT_TRUE(from_ws.ok());
  std::string expected_ws;
  for (int i = 0; i < 32; ++i) expected_ws += "0a";
  EXPECT_EQ(from_ws->Hex(), expected_ws);
  auto from_hex = ClusterKey::FromFile(Write("hex.key", std::string("\n") + kHex + "\n\n", 0600));
  ASSERT_TRUE(from_hex.ok());
  EXPECT_EQ(from_hex->Hex(), kHex);
}

TEST_F(ClusterKeyFileTest, BadContentIsInvalidArgumentWithoutTheContent) {
  const std::string secret_looking = std::string(kHex).substr(0, 62) + "zz";
  for (const std::string& content :
       {std::string(31, 'a'), std::string(33, 'a'), std::string(kHex).substr(0, 63),
        secret_looking, std::string()}) {
    const std::string path = Write("bad.key", content, 0600);
    auto key = ClusterKey::FromFile(path);
    ASSERT_FALSE(key.ok()) << content.size();
    EXPECT_EQ(key.status().code(), Code::kInvalidArgument);
    EXPECT_NE(key.status().message().find(path), std::string::npos);
    EXPECT_NE(key.status().message().find("32 raw bytes or 64 hex digits"), std::string::npos);
    if (content.size() > 4) {
      EXPECT_EQ(key.status().message().find(content.substr(0, 16)), std::string::npos);
    }
  }
  const std::string big = Write("big.key", std::string(10'000, 'a'), 0600);
  EXPECT_EQ(ClusterKey::FromFile(big).status().code(), Code::kInvalidArgument);
}

TEST_F(ClusterKeyFileTest, MissingFileAndDirectory) {
  auto missing = ClusterKey::FromFile((dir_ / "nope.key").string());
  EXPECT_EQ(missing.status().code(), Code::kNotFound);
  std::filesystem::create_directory(dir_ / "d");
  ::chmod((dir_ / "d").c_str(), 0700);
  EXPECT_EQ(ClusterKey::FromFile((dir_ / "d").string()).status().code(),
            Code::kFailedPrecondition);
}

}  // namespace
}  // namespace vsc::proto
