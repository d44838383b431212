#include "realserver/snapshot.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/evp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <charconv>
#include <cstring>
#include <fstream>
#include <optional>
#include <utility>
#include <vector>

#include "common/unique_fd.h"
#include "net/endpoint.h"
#include "net/http_response_parser.h"
#include "proto/auth.h"
#include "replication/digest.h"
#include "replication/replica_store.h"
#include "store/database.h"

namespace vsc::realserver {
namespace {

std::string Hex(std::span<const uint8_t> bytes) {
  static const char* kHex = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (uint8_t b : bytes) {
    out += kHex[b >> 4];
    out += kHex[b & 15];
  }
  return out;
}

bool ConstantTimeEquals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

Result<uint64_t> ParseU64(std::string_view s, const char* what) {
  uint64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || p != s.data() + s.size()) {
    return DataLoss(std::string("snapshot answer: bad ") + what + " '" + std::string(s) + "'");
  }
  return v;
}

// 64 hex digits of the header `name` as 32 bytes.
Result<std::array<uint8_t, 32>> ParseHex32(std::string_view hex, const char* name) {
  std::array<uint8_t, 32> d{};
  const std::string bad = std::string("snapshot answer: ") + name + " is not 64 hex digits";
  if (hex.size() != d.size() * 2) return DataLoss(bad);
  auto nibble = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  for (size_t i = 0; i < d.size(); ++i) {
    int hi = nibble(hex[2 * i]), lo = nibble(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return DataLoss(bad);
    d[i] = static_cast<uint8_t>(hi << 4 | lo);
  }
  return d;
}

// SHA-256 of a byte stream, fed in pieces.
class Sha256 {
 public:
  Sha256() : ctx_(EVP_MD_CTX_new()) { EVP_DigestInit_ex(ctx_, EVP_sha256(), nullptr); }
  ~Sha256() { EVP_MD_CTX_free(ctx_); }
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;
  void Update(const char* data, size_t n) { EVP_DigestUpdate(ctx_, data, n); }
  std::array<uint8_t, 32> Final() {
    std::array<uint8_t, 32> out{};
    unsigned int n = 0;
    EVP_DigestFinal_ex(ctx_, out.data(), &n);
    return out;
  }

 private:
  EVP_MD_CTX* ctx_;
};

// The peer's address, IPv4 or IPv6 ("::1" as a replica names its own HTTP endpoint).
Result<net::SockAddr> Resolve(const std::string& host, uint16_t port) {
  auto ep = net::ParseUdpEndpoint(net::HostPort(host, port));
  if (!ep.ok()) return Unavailable("snapshot peer: " + ep.status().message());
  return net::ToSockAddr(*ep);
}

// Connects with a deadline, then leaves the socket blocking with per-call timeouts.
Result<int> ConnectWithTimeout(const net::SockAddr& addr, Duration timeout,
                               const std::string& what) {
  int fd =
      ::socket(addr.is_v6() ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return ErrnoStatus(what + ": socket", errno);
  UniqueFd guard(fd);
  if (::connect(fd, addr.get(), addr.length()) != 0 && errno != EINPROGRESS) {
    return Unavailable(what + ": connect: " + std::strerror(errno));
  }
  pollfd p{fd, POLLOUT, 0};
  const int ms =
      static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(timeout).count());
  int n = ::poll(&p, 1, ms);
  if (n == 0) return Unavailable(what + ": connect timed out");
  int err = 0;
  socklen_t len = sizeof(err);
  ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
  if (n < 0 || err != 0)
    return Unavailable(what + ": connect: " + std::strerror(n < 0 ? errno : err));
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  timeval tv{};
  tv.tv_sec = ms / 1000;
  tv.tv_usec = (ms % 1000) * 1000;
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
  return ::dup(fd);  // the guard closes the original
}

Status WriteAll(int fd, std::string_view data, const std::string& what) {
  while (!data.empty()) {
    ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Unavailable(what + ": send: " + std::strerror(errno));
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
  return Status::Ok();
}

std::atomic<uint64_t> g_serve_counter{0};

// Streams the body (its first bytes already in `rest`) into `out_path` and checks its length
// and X-Vsc-Body-Sha256; fsyncs the file, since it must survive a crash once it is installed.
Status ReceiveBody(int fd, const std::string& rest, const SnapshotHead& head,
                   const std::string& out_path, const std::string& what) {
  RemoveDatabaseFiles(out_path);
  std::ofstream out(out_path, std::ios::binary | std::ios::trunc);
  if (!out) return IoError(what + ": cannot create " + out_path);
  Sha256 hash;
  uint64_t received = std::min<uint64_t>(rest.size(), head.content_length);
  out.write(rest.data(), static_cast<std::streamsize>(received));
  hash.Update(rest.data(), static_cast<size_t>(received));
  std::vector<char> buf(256 * 1024);
  while (received < head.content_length) {
    const size_t want =
        static_cast<size_t>(std::min<uint64_t>(buf.size(), head.content_length - received));
    ssize_t n = ::recv(fd, buf.data(), want, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      return Unavailable(what + ": body cut short at " + std::to_string(received) + " of " +
                         std::to_string(head.content_length) + " bytes" +
                         (n < 0 ? std::string(": ") + std::strerror(errno) : std::string()));
    }
    out.write(buf.data(), n);
    hash.Update(buf.data(), static_cast<size_t>(n));
    received += static_cast<uint64_t>(n);
  }
  out.flush();
  if (!out) return IoError(what + ": writing " + out_path + " failed");
  out.close();
  if (hash.Final() != head.body_sha256) {
    return DataLoss(what +
                    ": the body does not match its X-Vsc-Body-Sha256 (damaged in "
                    "transit); nothing was installed, ask another peer");
  }
  int wfd = ::open(out_path.c_str(), O_RDONLY | O_CLOEXEC);
  if (wfd >= 0) {
    ::fsync(wfd);
    ::close(wfd);
  }
  return Status::Ok();
}

}  // namespace

std::string SnapshotToken(const proto::ClusterKey& key) {
  proto::HmacSha256 mac(key);
  std::string_view label(kSnapshotTokenLabel);
  auto tag = mac.Compute(
      std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(label.data()), label.size()));
  return Hex(tag);
}

bool HasBearerToken(const net::HttpRequest& request, std::string_view token) {
  auto auth = request.Header("Authorization");
  if (!auth) return false;
  std::string_view v = *auth;
  constexpr std::string_view kBearer = "Bearer ";
  if (v.size() < kBearer.size() || !net::EqualsIgnoreCase(v.substr(0, kBearer.size()), kBearer)) {
    return false;
  }
  return ConstantTimeEquals(v.substr(kBearer.size()), token);
}

void RemoveDatabaseFiles(const std::string& path) {
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) ::unlink((path + suffix).c_str());
}

std::optional<net::HttpResponse> RefuseSnapshotRequest(const net::HttpRequest& request,
                                                       std::string_view token) {
  if (request.method != "GET") return net::JsonError(405, "use GET /v1/snapshot");
  if (!HasBearerToken(request, token)) {
    return net::JsonError(401,
                          "snapshot needs Authorization: Bearer <hex HMAC-SHA256(cluster key, "
                          "\"vsc-snapshot-v1\")>");
  }
  return std::nullopt;
}

Result<SnapshotCopy> SnapshotCopy::Make(const std::string& db_path) {
  SnapshotCopy c;
  c.path_ = db_path + ".serve-" + std::to_string(::getpid()) + "-" +
            std::to_string(g_serve_counter.fetch_add(1)) + ".tmp";
  RemoveDatabaseFiles(c.path_);
  auto state = replication::Snapshot(db_path, c.path_);
  if (!state.ok()) return state.status().Annotate("snapshot failed");
  c.state_ = *state;
  UniqueFd fd(::open(c.path_.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return Internal("snapshot failed: cannot read the copy " + c.path_);
  // The hash goes in a header, so the copy is read once here and sent afterwards.
  Sha256 hash;
  std::vector<char> buf(kSnapshotChunk);
  for (;;) {
    const ssize_t n = ::read(fd.get(), buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Internal("snapshot failed: reading the copy " + c.path_);
    if (n == 0) break;
    hash.Update(buf.data(), static_cast<size_t>(n));
    c.size_ += static_cast<uint64_t>(n);
  }
  c.sha256_hex_ = Hex(hash.Final());
  return c;
}

SnapshotCopy::~SnapshotCopy() {
  if (!path_.empty()) RemoveDatabaseFiles(path_);
}

SnapshotCopy::SnapshotCopy(SnapshotCopy&& o) noexcept
    : path_(std::exchange(o.path_, {})),
      size_(o.size_),
      state_(o.state_),
      sha256_hex_(std::move(o.sha256_hex_)) {}

net::HttpResponse SnapshotCopy::Head() const {
  net::HttpResponse r;
  r.content_type = "application/vnd.sqlite3";
  r.headers.emplace_back("X-Vsc-Epoch", std::to_string(state_.epoch));
  r.headers.emplace_back("X-Vsc-Applied-Seq", std::to_string(state_.applied_seq));
  r.headers.emplace_back("X-Vsc-Digest", Hex(state_.digest));
  r.headers.emplace_back("X-Vsc-Body-Sha256", sha256_hex_);
  return r;
}

Result<SnapshotHead> ParseSnapshotHead(std::string_view head) {
  // The head alone, parsed as the answer to a HEAD request: no body is expected.
  net::HttpResponseParser parser(0, /*head_request=*/true);
  auto parsed = parser.Feed(head);
  auto* resp = std::get_if<net::HttpResponse>(&parsed);
  if (resp == nullptr) {
    auto* err = std::get_if<net::HttpParseError>(&parsed);
    return DataLoss("snapshot answer: " +
                    (err ? err->message : std::string("incomplete status line or headers")));
  }
  SnapshotHead h;
  h.status = resp->status;
  if (h.status == 401) {
    return Unauthenticated("snapshot peer refused the token: it holds a different cluster key");
  }
  if (h.status != 200) {
    return DataLoss("snapshot peer answered HTTP " + std::to_string(h.status));
  }
  auto header = [&](const char* name) -> Result<std::string_view> {
    std::string_view v = resp->Header(name);
    if (v.empty()) return DataLoss(std::string("snapshot answer has no ") + name + " header");
    return v;
  };
  VSC_ASSIGN_OR_RETURN(auto length, header("Content-Length"));
  VSC_ASSIGN_OR_RETURN(h.content_length, ParseU64(length, "Content-Length"));
  VSC_ASSIGN_OR_RETURN(auto epoch, header("X-Vsc-Epoch"));
  VSC_ASSIGN_OR_RETURN(h.state.epoch, ParseU64(epoch, "X-Vsc-Epoch"));
  VSC_ASSIGN_OR_RETURN(auto seq, header("X-Vsc-Applied-Seq"));
  VSC_ASSIGN_OR_RETURN(h.state.applied_seq, ParseU64(seq, "X-Vsc-Applied-Seq"));
  VSC_ASSIGN_OR_RETURN(auto digest, header("X-Vsc-Digest"));
  VSC_ASSIGN_OR_RETURN(h.state.digest, ParseHex32(digest, "X-Vsc-Digest"));
  h.digest_hex = std::string(digest);
  VSC_ASSIGN_OR_RETURN(auto body_sha256, header("X-Vsc-Body-Sha256"));
  VSC_ASSIGN_OR_RETURN(h.body_sha256, ParseHex32(body_sha256, "X-Vsc-Body-Sha256"));
  return h;
}

Result<replication::ReplicaState> InspectSnapshot(const std::string& path) {
  store::OpenOptions o;
  o.read_only = true;
  auto db = store::Database::Open(path, o);
  if (!db.ok()) return DataLoss("snapshot " + path + " does not open: " + db.status().message());
  {
    auto check = db->Prepare("PRAGMA quick_check");
    if (!check.ok()) return DataLoss("snapshot " + path + ": " + check.status().message());
    auto row = check->Step();
    if (!row.ok() || !*row || check->ColumnText(0) != "ok") {
      return DataLoss("snapshot " + path + " fails PRAGMA quick_check" +
                      (row.ok() && *row ? ": " + std::string(check->ColumnText(0)) : ""));
    }
  }
  auto tables =
      db->Prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '_vsc_replica'");
  if (!tables.ok()) return DataLoss("snapshot " + path + ": " + tables.status().message());
  auto found = tables->Step();
  if (!found.ok() || !*found) {
    return DataLoss("snapshot " + path + " is not a replica database (no _vsc_replica table)");
  }
  auto state = replication::ReadReplicaState(path);
  if (!state.ok()) return DataLoss("snapshot " + path + ": " + state.status().message());
  return *state;
}

Result<replication::ReplicaState> FetchSnapshot(const std::string& host, uint16_t port,
                                                std::string_view token, const std::string& out_path,
                                                Duration timeout) {
  const std::string what = "snapshot from " + net::HostPort(host, port);
  VSC_ASSIGN_OR_RETURN(net::SockAddr addr, Resolve(host, port));
  VSC_ASSIGN_OR_RETURN(int raw, ConnectWithTimeout(addr, timeout, what));
  UniqueFd fd(raw);
  const std::string request =
      std::string("GET ") + kSnapshotPath + " HTTP/1.1\r\nHost: " + net::HostPort(host, port) +
      "\r\nAuthorization: Bearer " + std::string(token) + "\r\nConnection: close\r\n\r\n";
  VSC_RETURN_IF_ERROR(WriteAll(fd.get(), request, what));

  std::string head;
  std::vector<char> buf(256 * 1024);
  size_t head_end = std::string::npos;
  while (head_end == std::string::npos) {
    ssize_t n = ::recv(fd.get(), buf.data(), buf.size(), 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      return Unavailable(what + ": " +
                         (n == 0 ? std::string("connection closed before the answer")
                                 : std::string("receive: ") + std::strerror(errno)));
    }
    head.append(buf.data(), static_cast<size_t>(n));
    head_end = head.find("\r\n\r\n");
    if (head_end == std::string::npos && head.size() > 64 * 1024) {
      return DataLoss(what + ": answer head larger than 64 KiB");
    }
  }
  std::string rest = head.substr(head_end + 4);
  head.resize(head_end + 4);
  auto parsed = ParseSnapshotHead(head);
  if (!parsed.ok()) {
    // The body of an error answer says why; keep a little of it.
    return Status(parsed.status().code(),
                  what + ": " + parsed.status().message() +
                      (rest.empty() ? "" : " (" + rest.substr(0, 200) + ")"));
  }

  VSC_RETURN_IF_ERROR(ReceiveBody(fd.get(), rest, *parsed, out_path, what));
  VSC_ASSIGN_OR_RETURN(replication::ReplicaState state, InspectSnapshot(out_path));
  // Opening it read-only may have left empty side files; nothing else uses this copy.
  ::unlink((out_path + "-wal").c_str());
  ::unlink((out_path + "-shm").c_str());
  if (state.applied_seq != parsed->state.applied_seq || state.epoch != parsed->state.epoch ||
      state.digest != parsed->state.digest) {
    return DataLoss(what + ": the file holds seq " + std::to_string(state.applied_seq) +
                    " digest " + replication::DigestHex(state.digest) +
                    " but the peer announced seq " + std::to_string(parsed->state.applied_seq) +
                    " digest " + parsed->digest_hex);
  }
  return state;
}

}  // namespace vsc::realserver
