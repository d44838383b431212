// A VFS that forwards every method to another one (its base, kept in pAppData): the starting
// point of this project's VFS shims (the replica's pinned clock, the readers' kept memory map),
// which then replace the few methods they change. Pure wiring, no state of its own.
#pragma once

#include <sqlite3.h>

namespace vsc::store {

// A VFS named `name` (a string that outlives it) over `base`: same file size, path limit and
// version (capped at 3), every method forwarding to `base`.
sqlite3_vfs ForwardingVfs(sqlite3_vfs* base, const char* name);

// The base of a VFS made by ForwardingVfs.
inline sqlite3_vfs* BaseOf(sqlite3_vfs* vfs) { return static_cast<sqlite3_vfs*>(vfs->pAppData); }

}  // namespace vsc::store
