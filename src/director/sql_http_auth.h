// HttpUsers: rqlite's basic-auth users file for the HTTP API (shared/reference/rqlite_api.md §9):
// a JSON array of {"username": ..., "password": ..., "perms": [...]}. Username "*" grants its
// perms to everyone, anonymous requests included; "all" grants every perm. Pure: the caller
// reads the file. Passwords are plaintext in the file (as rqlite's) and compared in constant time.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace vsc::director {

class HttpUsers {
 public:
  // InvalidArgument naming what is wrong ("entry 2 has no username").
  static Result<HttpUsers> Parse(std::string_view json_text);

  // Whether a request with this Authorization header (absent: anonymous) holds `perm`.
  bool Allowed(std::optional<std::string_view> authorization, std::string_view perm) const;

 private:
  struct User {
    std::string name;
    std::string password;
    std::set<std::string, std::less<>> perms;
    bool Has(std::string_view perm) const { return perms.count(perm) || perms.count("all"); }
  };
  std::vector<User> users_;
};

// Reads and parses the users file at `path`; errors name the file.
Result<HttpUsers> LoadHttpUsers(const std::string& path);

}  // namespace vsc::director
