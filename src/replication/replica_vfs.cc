#include "replication/replica_vfs.h"

#include <sqlite3.h>

#include <mutex>

namespace vsc::replication {
namespace {

// Julian day number of 1970-01-01T00:00:00Z, in milliseconds.
constexpr int64_t kUnixEpochJulianMillis = 210866760000000LL;

thread_local bool t_pinned = false;
thread_local int64_t t_pinned_micros = 0;

sqlite3_vfs* g_base = nullptr;
sqlite3_vfs g_vfs;

int Open(sqlite3_vfs*, sqlite3_filename name, sqlite3_file* file, int flags, int* out_flags) {
  return g_base->xOpen(g_base, name, file, flags, out_flags);
}
int Delete(sqlite3_vfs*, const char* name, int sync_dir) {
  return g_base->xDelete(g_base, name, sync_dir);
}
int Access(sqlite3_vfs*, const char* name, int flags, int* out) {
  return g_base->xAccess(g_base, name, flags, out);
}
int FullPathname(sqlite3_vfs*, const char* name, int n, char* out) {
  return g_base->xFullPathname(g_base, name, n, out);
}
void* DlOpen(sqlite3_vfs*, const char* name) { return g_base->xDlOpen(g_base, name); }
void DlError(sqlite3_vfs*, int n, char* out) { g_base->xDlError(g_base, n, out); }
void (*DlSym(sqlite3_vfs*, void* handle, const char* symbol))(void) {
  return g_base->xDlSym(g_base, handle, symbol);
}
void DlClose(sqlite3_vfs*, void* handle) { g_base->xDlClose(g_base, handle); }
int Randomness(sqlite3_vfs*, int n, char* out) { return g_base->xRandomness(g_base, n, out); }
int Sleep(sqlite3_vfs*, int micros) { return g_base->xSleep(g_base, micros); }
int GetLastError(sqlite3_vfs*, int n, char* out) {
  return g_base->xGetLastError != nullptr ? g_base->xGetLastError(g_base, n, out) : 0;
}

int CurrentTimeInt64(sqlite3_vfs*, sqlite3_int64* out) {
  if (t_pinned) {
    *out = JulianDayMillis(t_pinned_micros);
    return SQLITE_OK;
  }
  if (g_base->iVersion >= 2 && g_base->xCurrentTimeInt64 != nullptr) {
    return g_base->xCurrentTimeInt64(g_base, out);
  }
  double day = 0;
  const int rc = g_base->xCurrentTime(g_base, &day);
  *out = static_cast<sqlite3_int64>(day * 86400000.0);
  return rc;
}

int CurrentTime(sqlite3_vfs* vfs, double* out) {
  sqlite3_int64 ms = 0;
  const int rc = CurrentTimeInt64(vfs, &ms);
  *out = static_cast<double>(ms) / 86400000.0;
  return rc;
}

int SetSystemCall(sqlite3_vfs*, const char* name, sqlite3_syscall_ptr fn) {
  return g_base->xSetSystemCall(g_base, name, fn);
}
sqlite3_syscall_ptr GetSystemCall(sqlite3_vfs*, const char* name) {
  return g_base->xGetSystemCall(g_base, name);
}
const char* NextSystemCall(sqlite3_vfs*, const char* name) {
  return g_base->xNextSystemCall(g_base, name);
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
    g_vfs = sqlite3_vfs{};
    g_vfs.iVersion = g_base->iVersion < 3 ? g_base->iVersion : 3;
    g_vfs.szOsFile = g_base->szOsFile;  // files are the base VFS's own
    g_vfs.mxPathname = g_base->mxPathname;
    g_vfs.zName = kReplicaVfsName;
    g_vfs.xOpen = Open;
    g_vfs.xDelete = Delete;
    g_vfs.xAccess = Access;
    g_vfs.xFullPathname = FullPathname;
    g_vfs.xDlOpen = DlOpen;
    g_vfs.xDlError = DlError;
    g_vfs.xDlSym = DlSym;
    g_vfs.xDlClose = DlClose;
    g_vfs.xRandomness = Randomness;
    g_vfs.xSleep = Sleep;
    g_vfs.xCurrentTime = CurrentTime;
    g_vfs.xGetLastError = GetLastError;
    g_vfs.xCurrentTimeInt64 = CurrentTimeInt64;
    if (g_vfs.iVersion >= 3) {
      g_vfs.xSetSystemCall = SetSystemCall;
      g_vfs.xGetSystemCall = GetSystemCall;
      g_vfs.xNextSystemCall = NextSystemCall;
    }
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
