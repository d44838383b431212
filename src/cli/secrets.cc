#include "cli/secrets.h"

#include <fcntl.h>
#include <openssl/rand.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdlib>

#include "common/file_checks.h"
#include "common/file_text.h"

namespace vsc::cli {
namespace {

constexpr const char* kDefaultTokenFile = "director-admin.token";

Result<std::string> ReadTrimmed(const std::string& path) {
  auto text = ReadFileText(path);
  if (!text.ok()) return NotFound(text.status().message());
  std::string s = std::move(*text);
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  if (s.empty()) return InvalidArgument(path + " is empty");
  return s;
}

}  // namespace

Result<proto::ClusterKey> ResolveClusterKey(const std::string& key_file, bool insecure) {
  if (!key_file.empty()) return proto::ClusterKey::FromFile(key_file);
  if (std::getenv("VSC_CLUSTER_KEY") != nullptr) return proto::ClusterKey::FromEnv();
  if (insecure) {
    spdlog::warn("running INSECURE: no cluster key, control messages are not authenticated");
    std::array<uint8_t, proto::ClusterKey::kBytes> zero{};
    return proto::ClusterKey::FromBytes(zero);
  }
  return Unauthenticated(
      "no cluster key: give key_file (a file of mode 0600 with 64 hex digits) or set "
      "VSC_CLUSTER_KEY; `vsc demo` shows how to make one. --insecure runs without one (testing "
      "only)");
}

Result<AdminToken> ResolveAdminToken(const std::string& path) {
  if (!path.empty() && access(path.c_str(), F_OK) == 0) {
    VSC_ASSIGN_OR_RETURN(std::string t, ReadTrimmed(path));
    return AdminToken{std::move(t), ""};
  }
  if (const char* env = std::getenv("VSC_ADMIN_TOKEN"); env != nullptr && *env != '\0') {
    return AdminToken{std::string(env), ""};
  }
  const std::string file = path.empty() ? kDefaultTokenFile : path;
  if (access(file.c_str(), F_OK) == 0) {
    VSC_ASSIGN_OR_RETURN(std::string t, ReadTrimmed(file));
    return AdminToken{std::move(t), ""};
  }
  VSC_RETURN_IF_ERROR(CheckCanCreate(file, "admin token file"));
  std::array<uint8_t, 24> raw;
  if (RAND_bytes(raw.data(), static_cast<int>(raw.size())) != 1) {
    return Internal("cannot generate an admin token (RAND_bytes failed)");
  }
  static const char* kHex = "0123456789abcdef";
  std::string token;
  for (uint8_t b : raw) {
    token += kHex[b >> 4];
    token += kHex[b & 15];
  }
  return AdminToken{std::move(token), file};
}

Status CreateAdminTokenFile(const AdminToken& token) {
  if (token.create_file.empty()) return Status::Ok();
  const std::string& file = token.create_file;
  int fd = open(file.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0 && errno == EEXIST) {
    return FailedPrecondition("admin token file " + file +
                              " appeared while this director started (another director in this "
                              "directory?); start again to use it");
  }
  if (fd < 0) return ErrnoStatus("writing admin token " + file, errno);
  std::string line = token.value + "\n";
  ssize_t n = write(fd, line.data(), line.size());
  close(fd);
  if (n != static_cast<ssize_t>(line.size())) return IoError("short write to " + file);
  spdlog::info("admin token written to {}", file);
  return Status::Ok();
}

Result<std::string> ReadAdminToken(const std::string& path) {
  if (!path.empty()) return ReadTrimmed(path);
  if (const char* env = std::getenv("VSC_ADMIN_TOKEN"); env != nullptr && *env != '\0') {
    return std::string(env);
  }
  auto t = ReadTrimmed(kDefaultTokenFile);
  if (!t.ok()) {
    return Unauthenticated(
        "no admin token: pass --token-file, set VSC_ADMIN_TOKEN, or run from the director's "
        "directory (director-admin.token)");
  }
  return t;
}

}  // namespace vsc::cli
