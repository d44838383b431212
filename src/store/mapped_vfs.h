// The mapped VFS ("vsc-mapped"): SQLite's default VFS, except that a connection's memory map of
// its main database file survives a change of snapshot.
//
// Why: with PRAGMA mmap_size, every read transaction that finds the WAL changed (any commit by
// any connection since its last one) makes SQLite drop the whole map (xUnfetch(0, NULL), a
// munmap), so the next lookups fault every page back in. On a replica that commits a thousand
// times a second, that costs each read connection one munmap and a page fault per page it
// touches, per commit (measured in docs/benchmarks.md "Mixed load"). The map is MAP_SHARED, so
// it always shows the file's current bytes; only the file's size can make it wrong. So this VFS
// keeps the map when the file's size is what it was when the map was made (one fstat), and lets
// SQLite drop it otherwise (the file grew at a checkpoint, or shrank): pages the map does not
// cover are read with pread until the next map, as SQLite itself does.
//
// Registered once per process (RegisterMappedVfs, thread safe). Open with it through
// OpenOptions::keep_map. Per-file state is the connection's own (one thread at a time).
#pragma once

#include <cstdint>

namespace vsc::store {

inline constexpr const char* kMappedVfsName = "vsc-mapped";

// Registers the VFS (idempotent, thread safe). Returns the SQLite result code.
int RegisterMappedVfs();

// Process-wide counts of SQLite's requests to drop a main database file's map.
struct MappedVfsStats {
  uint64_t kept = 0;     // the file's size was unchanged: the map stayed
  uint64_t dropped = 0;  // it changed (or was unknown): the map was dropped as SQLite asked
};
MappedVfsStats GetMappedVfsStats();

}  // namespace vsc::store
