#include "director/sql_http_auth.h"

#include <gtest/gtest.h>

#include <vector>

#include "common/base64.h"
#include "director/sql_http_json.h"

namespace vsc::director {
namespace {

std::string Basic(const std::string& user, const std::string& password) {
  return "Basic " + Base64Encode(user + ":" + password);
}

TEST(HttpUsersTest, PermissionsFollowRqlitesUsersFile) {
  auto users = HttpUsers::Parse(R"j([
      {"username": "bob", "password": "secret1", "perms": ["query", "status"]},
      {"username": "admin", "password": "s3cr3t", "perms": ["all"]},
      {"username": "*", "perms": ["ready"]}])j");
  ASSERT_TRUE(users.ok()) << users.status().ToString();
  EXPECT_TRUE(users->Allowed(Basic("bob", "secret1"), "query"));
  EXPECT_FALSE(users->Allowed(Basic("bob", "secret1"), "execute")) << "bob may not write";
  EXPECT_FALSE(users->Allowed(Basic("bob", "secret2"), "query")) << "wrong password";
  EXPECT_FALSE(users->Allowed(Basic("bob", "secret"), "query")) << "a prefix is no password";
  EXPECT_TRUE(users->Allowed(Basic("admin", "s3cr3t"), "execute"));
  EXPECT_FALSE(users->Allowed(std::nullopt, "query")) << "anonymous";
  EXPECT_TRUE(users->Allowed(std::nullopt, "ready")) << "'*' grants to everyone";
  EXPECT_FALSE(users->Allowed(Basic("*", ""), "query"));
  EXPECT_FALSE(users->Allowed("Bearer x", "query"));
  EXPECT_FALSE(users->Allowed("Basic !!!", "query"));
}

TEST(HttpUsersTest, ABadFileSaysWhatIsWrong) {
  EXPECT_NE(HttpUsers::Parse("{}").status().message().find("JSON array"), std::string::npos);
  EXPECT_NE(HttpUsers::Parse(R"j([{"password": "x", "perms": []}])j")
                .status()
                .message()
                .find("entry 1 has no username"),
            std::string::npos);
  EXPECT_NE(HttpUsers::Parse(R"j([{"username": "a"}])j").status().message().find("no perms"),
            std::string::npos);
}

TEST(HttpUsersTest, Base64DecodeInvertsBase64) {
  for (const std::string& s : std::vector<std::string>{"", "f", "fo", "foo", "foob", "fooba",
                                                       "foobar", std::string("\0\xff", 2)}) {
    auto back = Base64Decode(Base64Encode(s));
    ASSERT_TRUE(back.ok()) << s;
    EXPECT_EQ(*back, s);
  }
  EXPECT_FALSE(Base64Decode("a").ok());
  EXPECT_FALSE(Base64Decode("ab$c").ok());
}

}  // namespace
}  // namespace vsc::director
