#include "replication/replica_vfs.h"

#include <sqlite3.h>

#include <mutex>

#include "store/vfs_forwarding.h"

namespace vsc::replication {
namespace {

// Julian day number of 1970-01-01T00:00:00Z, in milliseconds.
constexpr int64_t kUnixEpochJulianMillis = 210866760000000LL;

thread_local bool t_pinned = false;
thread_local int64_t t_pinned_micros = 0;

sqlite3_vfs* g_base = nullptr;
sqlite3_vfs g_vfs;
// The forwarding VFS's own clock (the base's), for unpinned reads.
int (*g_real_time)(sqlite3_vfs*, sqlite3_int64*) = nullptr;

int CurrentTimeInt64(sqlite3_vfs* vfs, sqlite3_int64* out) {
  if (t_pinned) {
    *out = JulianDayMillis(t_pinned_micros);
    return SQLITE_OK;
  }
  return g_real_time(vfs, out);
}

int CurrentTime(sqlite3_vfs* vfs, double* out) {
  sqlite3_int64 ms = 0;
  const int rc = CurrentTimeInt64(vfs, &ms);
  *out = static_cast<double>(ms) / 86400000.0;
  return rc;
}

}  // namespace

int64_t JulianDayMillis(int64_t unix_micros) {
  int64_t ms = unix_micros / 1000;
  if (unix_micros % 1000 < 0) --ms;  // floor, also before 1970
  return kUnixEpochJulianMillis + ms;
}

int RegisterReplicaVfs() {
  static std::once_flag once;
  static int rc = SQLITE_OK;
  std::call_once(once, [] {
    rc = sqlite3_initialize();
    if (rc != SQLITE_OK) return;
    g_base = sqlite3_vfs_find(nullptr);
    if (g_base == nullptr) {
      rc = SQLITE_ERROR;
      return;
    }
    g_vfs = store::ForwardingVfs(g_base, kReplicaVfsName);
    g_real_time = g_vfs.xCurrentTimeInt64;
    if (g_real_time == nullptr) {
      rc = SQLITE_ERROR;  // a base VFS of version 1 (SQLite's own unix VFS is version 3)
      return;
    }
    g_vfs.xCurrentTime = CurrentTime;
    g_vfs.xCurrentTimeInt64 = CurrentTimeInt64;
    rc = sqlite3_vfs_register(&g_vfs, 0);
  });
  return rc;
}

ClockPin::ClockPin(int64_t ts_micros) {
  t_pinned = true;
  t_pinned_micros = ts_micros;
}

ClockPin::~ClockPin() { t_pinned = false; }

}  // namespace vsc::replication
