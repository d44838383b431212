// Snapshots between replicas (DESIGN §7 catch-up): a real server serves a consistent copy of its
// replica database on its HTTP port (`GET /v1/snapshot`), and fetches one from a peer when the
// director sends InstallSnapshot.
//
// Authentication: `Authorization: Bearer <token>` where token = hex(HMAC-SHA256(cluster key,
// "vsc-snapshot-v1")). Every holder of the cluster key can compute it; see docs/operations.md
// "Snapshots" for what that does and does not protect.
//
// The answer carries the copy's replica state in headers (X-Vsc-Epoch, X-Vsc-Applied-Seq,
// X-Vsc-Digest, hex) and the SHA-256 of its body (X-Vsc-Body-Sha256, hex); the fetcher checks
// the body against that hash (a page damaged in transit can pass PRAGMA quick_check) and that
// the file it received holds exactly the announced state.
//
// Threads: SnapshotCopy::Make blocks its caller (the snapshot server's own thread,
// snapshot_server.h); FetchSnapshot blocks its caller (the replica thread).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/clock.h"
#include "common/status.h"
#include "net/http_parser.h"
#include "net/http_response.h"
#include "proto/cluster_key.h"
#include "replication/executor.h"

namespace vsc::realserver {

inline constexpr char kSnapshotPath[] = "/v1/snapshot";
inline constexpr char kSnapshotTokenLabel[] = "vsc-snapshot-v1";

// Hex HMAC-SHA256(key, "vsc-snapshot-v1"): 64 lowercase hex digits.
std::string SnapshotToken(const proto::ClusterKey& key);

// True when the request carries "Authorization: Bearer <token>" (compared in constant time).
bool HasBearerToken(const net::HttpRequest& request, std::string_view token);

// Bytes read or sent at a time while a snapshot is hashed or streamed.
inline constexpr size_t kSnapshotChunk = 64 * 1024;

// The answer to a request for GET /v1/snapshot that may not have one: 405 for other methods,
// 401 without the token; nullopt for a request to serve.
std::optional<net::HttpResponse> RefuseSnapshotRequest(const net::HttpRequest& request,
                                                       std::string_view token);

// One consistent copy of the replica database, made for one answer (replication::Snapshot into
// a temporary file next to the database, removed with the object), with what its answer
// announces: size, SHA-256 and replica state. The body is streamed from path() (see
// snapshot_server.h); memory stays at one kSnapshotChunk whatever the database's size.
// Make fails (Internal, with the reason) when the copy cannot be made or read back.
class SnapshotCopy {
 public:
  static Result<SnapshotCopy> Make(const std::string& db_path);
  SnapshotCopy(SnapshotCopy&& other) noexcept;
  SnapshotCopy& operator=(SnapshotCopy&&) = delete;
  ~SnapshotCopy();
  const std::string& path() const { return path_; }
  uint64_t size() const { return size_; }
  const replication::ReplicaState& state() const { return state_; }
  // Status 200, content type and the X-Vsc-* headers; the body (size() bytes) is path()'s.
  net::HttpResponse Head() const;

 private:
  SnapshotCopy() = default;
  std::string path_;
  uint64_t size_ = 0;
  replication::ReplicaState state_;
  std::string sha256_hex_;
};

// What the head of a snapshot answer says.
struct SnapshotHead {
  int status = 0;
  uint64_t content_length = 0;
  replication::ReplicaState state;
  std::string digest_hex;
  std::array<uint8_t, 32> body_sha256{};
};

// Parses the status line and headers (everything up to and including the blank line). Pure.
// DataLoss for a malformed head, a non-200 status (the error names it), a missing
// Content-Length or missing/invalid X-Vsc-* headers.
Result<SnapshotHead> ParseSnapshotHead(std::string_view head);

// Opens a database file read-only and checks it: PRAGMA quick_check says ok, and its replica
// state (table _vsc_replica) is readable. DataLoss otherwise.
Result<replication::ReplicaState> InspectSnapshot(const std::string& path);

// Fetches http://host:port/v1/snapshot into `out_path` (created or replaced), streaming the
// body to disk, and checks the length, the body's SHA-256, the file (InspectSnapshot) and that
// its state equals the one announced in the headers. `timeout` bounds the connect and each read or
// write. Unavailable when the peer cannot be reached or stalls, DataLoss for a bad answer or file,
// Unauthenticated on 401.
Result<replication::ReplicaState> FetchSnapshot(const std::string& host, uint16_t port,
                                                std::string_view token, const std::string& out_path,
                                                Duration timeout);

// Removes `path` and its SQLite side files (-wal, -shm, -journal) if present.
void RemoveDatabaseFiles(const std::string& path);

}  // namespace vsc::realserver
