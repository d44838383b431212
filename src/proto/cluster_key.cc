#include "proto/cluster_key.h"

#include <fcntl.h>
#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>

#include "common/unique_fd.h"

namespace vsc::proto {
namespace {

// Key files are tiny; reading more than this means the path names the wrong file.
constexpr size_t kMaxKeyFileBytes = 4096;

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string OctalMode(mode_t mode) {
  char buf[8];
  std::snprintf(buf, sizeof(buf), "%04o", static_cast<unsigned>(mode & 07777));
  return buf;
}

}  // namespace

ClusterKey::~ClusterKey() { OPENSSL_cleanse(bytes_.data(), bytes_.size()); }

ClusterKey ClusterKey::FromBytes(std::span<const uint8_t, kBytes> bytes) {
  ClusterKey key;
  std::copy(bytes.begin(), bytes.end(), key.bytes_.begin());
  return key;
}

Result<ClusterKey> ClusterKey::FromHex(std::string_view hex) {
  while (!hex.empty() && IsSpace(hex.front())) hex.remove_prefix(1);
  while (!hex.empty() && IsSpace(hex.back())) hex.remove_suffix(1);
  if (hex.size() != 2 * kBytes) {
    return InvalidArgument("cluster key must be 64 hex digits (32 bytes), found " +
                           std::to_string(hex.size()) +
                           " characters; generate one with `openssl rand -hex 32`");
  }
  ClusterKey key;
  for (size_t i = 0; i < kBytes; ++i) {
    const int hi = HexValue(hex[2 * i]);
    const int lo = HexValue(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) {
      // The position only: the offending character is part of the secret.
      return InvalidArgument("cluster key has a character that is not a hex digit at position " +
                             std::to_string(hi < 0 ? 2 * i : 2 * i + 1));
    }
    key.bytes_[i] = static_cast<uint8_t>(hi << 4 | lo);
  }
  return key;
}

Result<ClusterKey> ClusterKey::FromFile(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY));
  if (fd.get() < 0) {
    const int err = errno;
    if (err == ENOENT) return NotFound("cluster key file " + path + " does not exist");
    return ErrnoStatus("open cluster key file " + path, err);
  }
  // fstat on the opened descriptor, so the checks apply to the file actually read.
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) return ErrnoStatus("stat cluster key file " + path, errno);
  if (!S_ISREG(st.st_mode)) {
    return FailedPrecondition("cluster key file " + path + " is not a regular file");
  }
  if ((st.st_mode & 077) != 0) {
    return FailedPrecondition("cluster key file " + path + " has mode " + OctalMode(st.st_mode) +
                              ", which lets group or others access it; the key is refused. Run "
                              "`chmod 600 " + path + "`");
  }
  std::string content;
  char buf[512];
  for (;;) {
    const ssize_t n = ::read(fd.get(), buf, sizeof(buf));
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus("read cluster key file " + path, errno);
    }
    if (n == 0) break;
    content.append(buf, static_cast<size_t>(n));
    if (content.size() > kMaxKeyFileBytes) {
      OPENSSL_cleanse(content.data(), content.size());
      return InvalidArgument("cluster key file " + path + " is larger than " +
                             std::to_string(kMaxKeyFileBytes) +
                             " bytes; it should hold 32 raw bytes or 64 hex digits");
    }
  }
  OPENSSL_cleanse(buf, sizeof(buf));
  Result<ClusterKey> key = [&]() -> Result<ClusterKey> {
    if (content.size() == kBytes) {
      ClusterKey k;
      std::copy(content.begin(), content.end(), k.bytes_.begin());
      return k;
    }
    Result<ClusterKey> parsed = FromHex(content);
    if (!parsed.ok()) {
      return InvalidArgument("cluster key file " + path + ": expected 32 raw bytes or 64 hex "
                             "digits (" + parsed.status().message() + ")");
    }
    return parsed;
  }();
  OPENSSL_cleanse(content.data(), content.size());
  return key;
}

Result<ClusterKey> ClusterKey::FromEnv(const char* var) {
  const char* value = std::getenv(var);
  if (value == nullptr || *value == '\0') {
    return NotFound(std::string("environment variable ") + var + " is not set");
  }
  Result<ClusterKey> key = FromHex(value);
  if (!key.ok()) return key.status().Annotate(std::string("environment variable ") + var);
  return key;
}

Result<ClusterKey> ClusterKey::Generate() {
  ClusterKey key;
  if (RAND_bytes(key.bytes_.data(), static_cast<int>(key.bytes_.size())) != 1) {
    return Internal("OpenSSL RAND_bytes failed to generate a cluster key");
  }
  return key;
}

Status ClusterKey::WriteFile(const std::string& path) const {
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600));
  if (fd.get() < 0) {
    const int err = errno;
    if (err == EEXIST) {
      return AlreadyExists("cluster key file " + path +
                           " exists already; remove it first if you mean to replace the key");
    }
    return ErrnoStatus("create cluster key file " + path, err);
  }
  // The umask can only clear bits, but make the mode explicit regardless of it.
  if (::fchmod(fd.get(), 0600) != 0) return ErrnoStatus("chmod cluster key file " + path, errno);
  std::string text = Hex();
  text.push_back('\n');
  size_t done = 0;
  Status status;
  while (done < text.size()) {
    const ssize_t n = ::write(fd.get(), text.data() + done, text.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      status = ErrnoStatus("write cluster key file " + path, errno);
      break;
    }
    done += static_cast<size_t>(n);
  }
  if (status.ok() && ::fsync(fd.get()) != 0) {
    status = ErrnoStatus("fsync cluster key file " + path, errno);
  }
  OPENSSL_cleanse(text.data(), text.size());
  if (!status.ok()) ::unlink(path.c_str());  // never leave a truncated key behind
  return status;
}

std::string ClusterKey::Hex() const {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(2 * kBytes);
  for (uint8_t b : bytes_) {
    out.push_back(kDigits[b >> 4]);
    out.push_back(kDigits[b & 0xf]);
  }
  return out;
}

bool ClusterKey::operator==(const ClusterKey& other) const {
  return CRYPTO_memcmp(bytes_.data(), other.bytes_.data(), kBytes) == 0;
}

}  // namespace vsc::proto
