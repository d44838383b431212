#include "director/sql_http_auth.h"

#include <openssl/crypto.h>

#include <nlohmann/json.hpp>

#include "common/base64.h"
#include "common/file_text.h"

namespace vsc::director {
namespace {

bool SameSecret(std::string_view a, std::string_view b) {
  return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace

Result<HttpUsers> HttpUsers::Parse(std::string_view json_text) {
  const auto doc = nlohmann::json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_array()) {
    return InvalidArgument(
        "the users file must be a JSON array of {\"username\", \"password\", \"perms\"}");
  }
  HttpUsers out;
  for (size_t i = 0; i < doc.size(); ++i) {
    const auto& e = doc[i];
    const std::string where = "users file entry " + std::to_string(i + 1);
    if (!e.is_object() || !e.contains("username") || !e["username"].is_string()) {
      return InvalidArgument(where + " has no username");
    }
    User u;
    u.name = e["username"].get<std::string>();
    if (e.contains("password")) {
      if (!e["password"].is_string()) return InvalidArgument(where + ": password must be a string");
      u.password = e["password"].get<std::string>();
    }
    if (!e.contains("perms") || !e["perms"].is_array()) {
      return InvalidArgument(where + " (" + u.name + ") has no perms list");
    }
    for (const auto& p : e["perms"]) {
      if (!p.is_string()) return InvalidArgument(where + ": perms must be strings");
      u.perms.insert(p.get<std::string>());
    }
    out.users_.push_back(std::move(u));
  }
  return out;
}

bool HttpUsers::Allowed(std::optional<std::string_view> authorization,
                        std::string_view perm) const {
  for (const User& u : users_) {
    if (u.name == "*" && u.Has(perm)) return true;
  }
  if (!authorization || authorization->substr(0, 6) != "Basic ") return false;
  auto decoded = Base64Decode(authorization->substr(6));
  if (!decoded.ok()) return false;
  const size_t colon = decoded->find(':');
  if (colon == std::string::npos) return false;
  const std::string_view name = std::string_view(*decoded).substr(0, colon);
  const std::string_view password = std::string_view(*decoded).substr(colon + 1);
  for (const User& u : users_) {
    if (u.name != "*" && u.name == name) return SameSecret(u.password, password) && u.Has(perm);
  }
  return false;
}

Result<HttpUsers> LoadHttpUsers(const std::string& path) {
  auto text = ReadFileText(path);
  if (!text.ok()) {
    return IoError("http_auth: " + text.status().message() + "; give the path of a users file");
  }
  auto users = HttpUsers::Parse(*text);
  if (!users.ok()) return users.status().Annotate("http_auth " + path);
  return users;
}

}  // namespace vsc::director
