#include "cli/secrets.h"

#include <fcntl.h>
#include <openssl/rand.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace vsc::cli {
namespace {

constexpr const char* kDefaultTokenFile = "director-admin.token";

Result<std::string> ReadTrimmed(const std::string& path) {
  std::ifstream in(path);
  if (!in) return NotFound("cannot read " + path);
  std::stringstream buf;
  buf << in.rdbuf();
  std::string s = buf.str();
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

Result<std::string> ResolveAdminToken(const std::string& path) {
  const std::string file = path.empty() ? kDefaultTokenFile : path;
  if (!path.empty() && access(path.c_str(), F_OK) == 0) return ReadTrimmed(path);
  if (const char* env = std::getenv("VSC_ADMIN_TOKEN"); env != nullptr && *env != '\0') {
    return std::string(env);
  }
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
  int fd = open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (fd < 0) return ErrnoStatus("writing admin token " + file, errno);
  std::string line = token + "\n";
  ssize_t n = write(fd, line.data(), line.size());
  close(fd);
  if (n != static_cast<ssize_t>(line.size())) return IoError("short write to " + file);
  spdlog::info("admin token written to {}", file);
  return token;
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
