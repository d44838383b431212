// The resource table of DESIGN.md §10: which CG-tree node holds each resource.
//
//   resources(id INTEGER PRIMARY KEY, node TEXT NOT NULL, size INTEGER, updated_at INTEGER)
//
// `id` is the rowid, so a lookup is one B-tree descent. Updates arrive through replication
// (one writer connection); lookups are served by ResourceReader, one per worker thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "common/status.h"
#include "store/database.h"
#include "store/statement.h"

namespace vsc::store {

// A lookup request carries 1..kMaxLookupIds ids (DESIGN.md §10).
inline constexpr size_t kMaxLookupIds = 10;

// Creates the resources table when it does not exist yet.
Status CreateResourceSchema(Database& db);

struct LookupResult {
  uint64_t id = 0;
  bool found = false;
  std::string node;  // empty when not found
};

// A read-only view of a resource database for one worker thread.
//
// Owns its own read-only connection (memory-mapped, WAL snapshots: lookups never block the
// replication writer and see only committed data) and its prepared statements. Move-only; use
// from one thread at a time. The file must exist and hold the resources table.
//
// Snapshots: a Lookup of several ids reads them all from one snapshot. A worker that serves a
// receive batch of requests can share one snapshot (and its locking cost, about as much as two
// point lookups) across them with BeginBatch()/EndBatch(). Keep a batch short (never across a
// wait): an open snapshot does not see later commits and keeps the writer's checkpoints from
// recycling the WAL past it.
class ResourceReader {
 public:
  // Fails with kIo when the file cannot be opened, kDataLoss when it is not a database,
  // kInvalidArgument when it has no resources table.
  static Result<ResourceReader> Open(const std::string& path);

  ResourceReader(ResourceReader&& other) noexcept;
  ResourceReader& operator=(ResourceReader&& other) noexcept;
  ~ResourceReader();

  // Looks up 1..kMaxLookupIds ids. `out` is resized to ids.size() and entry i answers ids[i]
  // (duplicates are answered each time); the strings already in `out` are reused, so a caller
  // that keeps one vector per worker does not allocate in the steady state.
  // Fails with kInvalidArgument for 0 or more than kMaxLookupIds ids (then `out` is cleared),
  // or with the SQLite error (kUnavailable, kDataLoss, kIo...).
  Status Lookup(std::span<const uint64_t> ids, std::vector<LookupResult>& out);

  // Starts a read snapshot shared by the following Lookups until EndBatch. Fails with
  // kFailedPrecondition when a batch is already open.
  Status BeginBatch();
  // Ends the snapshot. Fails with kFailedPrecondition when no batch is open.
  Status EndBatch();
  bool in_batch() const { return in_batch_; }

 private:
  ResourceReader(Database db, Statement by_id, Statement begin, Statement commit)
      : db_(std::move(db)),
        by_id_(std::move(by_id)),
        begin_(std::move(begin)),
        commit_(std::move(commit)) {}
  Status LookupAll(std::span<const uint64_t> ids, std::vector<LookupResult>& out);

  Database db_;
  Statement by_id_;   // SELECT node FROM resources WHERE id=?1
  Statement begin_;   // BEGIN (deferred: the snapshot starts at the first read)
  Statement commit_;  // COMMIT (of a read transaction: ends the snapshot)
  bool in_batch_ = false;
};

}  // namespace vsc::store
