// Builds a resource database (DESIGN.md §10) filled with deterministic synthetic records, as
// the papers' 2,000,000-record test set.
//
// Content is a pure function of (records, nodes, seed): ids 1..records in order, node
// "node-%04u" uniform over [0, nodes), size in bytes uniform over [64 KiB, 4 GiB), updated_at
// (Unix seconds) uniform over the five years from 2020-01-01. Two builds with the same options
// hold identical rows. Blocking; call it from a thread that may block for seconds.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "common/status.h"

namespace vsc::store {

struct BuildOptions {
  std::string path;
  uint64_t records = 2'000'000;
  uint32_t nodes = 64;
  uint64_t seed = 1;
  // Replace an existing file at `path` (and its -wal/-shm companions).
  bool overwrite = false;
};

struct BuildStats {
  uint64_t records = 0;
  uint64_t file_bytes = 0;
};

// The first Unix second of the updated_at range (2020-01-01T00:00:00Z).
inline constexpr int64_t kResourceBaseUnixSeconds = 1'577'836'800;

// Writes the database into "<path>.tmp-<pid>" with journaling off, switches it to WAL, syncs it
// and renames it to `path`, so `path` is either absent, the old file, or the complete new one.
// `progress` (may be empty) is called on this thread with (done, total) at the start, every few
// thousand records and at the end.
// Fails with kAlreadyExists when `path` exists and !overwrite (checked before any work and
// again, atomically, at the final rename), kInvalidArgument for bad options, kIo otherwise.
Result<BuildStats> BuildResourceDb(
    const BuildOptions& options,
    const std::function<void(uint64_t done, uint64_t total)>& progress);

}  // namespace vsc::store
