#include "store/vfs_forwarding.h"

namespace vsc::store {
namespace {

int Open(sqlite3_vfs* v, sqlite3_filename name, sqlite3_file* file, int flags, int* out_flags) {
  return BaseOf(v)->xOpen(BaseOf(v), name, file, flags, out_flags);
}
int Delete(sqlite3_vfs* v, const char* name, int sync_dir) {
  return BaseOf(v)->xDelete(BaseOf(v), name, sync_dir);
}
int Access(sqlite3_vfs* v, const char* name, int flags, int* out) {
  return BaseOf(v)->xAccess(BaseOf(v), name, flags, out);
}
int FullPathname(sqlite3_vfs* v, const char* name, int n, char* out) {
  return BaseOf(v)->xFullPathname(BaseOf(v), name, n, out);
}
void* DlOpen(sqlite3_vfs* v, const char* name) { return BaseOf(v)->xDlOpen(BaseOf(v), name); }
void DlError(sqlite3_vfs* v, int n, char* out) { BaseOf(v)->xDlError(BaseOf(v), n, out); }
void (*DlSym(sqlite3_vfs* v, void* handle, const char* symbol))(void) {
  return BaseOf(v)->xDlSym(BaseOf(v), handle, symbol);
}
void DlClose(sqlite3_vfs* v, void* handle) { BaseOf(v)->xDlClose(BaseOf(v), handle); }
int Randomness(sqlite3_vfs* v, int n, char* out) {
  return BaseOf(v)->xRandomness(BaseOf(v), n, out);
}
int Sleep(sqlite3_vfs* v, int micros) { return BaseOf(v)->xSleep(BaseOf(v), micros); }
int CurrentTime(sqlite3_vfs* v, double* out) { return BaseOf(v)->xCurrentTime(BaseOf(v), out); }
int GetLastError(sqlite3_vfs* v, int n, char* out) {
  return BaseOf(v)->xGetLastError != nullptr ? BaseOf(v)->xGetLastError(BaseOf(v), n, out) : 0;
}
int CurrentTimeInt64(sqlite3_vfs* v, sqlite3_int64* out) {
  if (BaseOf(v)->iVersion >= 2 && BaseOf(v)->xCurrentTimeInt64 != nullptr) {
    return BaseOf(v)->xCurrentTimeInt64(BaseOf(v), out);
  }
  double day = 0;
  const int rc = BaseOf(v)->xCurrentTime(BaseOf(v), &day);
  *out = static_cast<sqlite3_int64>(day * 86400000.0);
  return rc;
}
int SetSystemCall(sqlite3_vfs* v, const char* name, sqlite3_syscall_ptr fn) {
  return BaseOf(v)->xSetSystemCall(BaseOf(v), name, fn);
}
sqlite3_syscall_ptr GetSystemCall(sqlite3_vfs* v, const char* name) {
  return BaseOf(v)->xGetSystemCall(BaseOf(v), name);
}
const char* NextSystemCall(sqlite3_vfs* v, const char* name) {
  return BaseOf(v)->xNextSystemCall(BaseOf(v), name);
}

}  // namespace

sqlite3_vfs ForwardingVfs(sqlite3_vfs* base, const char* name) {
  sqlite3_vfs vfs{};
  vfs.iVersion = base->iVersion < 3 ? base->iVersion : 3;
  vfs.szOsFile = base->szOsFile;  // files are the base VFS's own
  vfs.mxPathname = base->mxPathname;
  vfs.zName = name;
  vfs.pAppData = base;
  vfs.xOpen = Open;
  vfs.xDelete = Delete;
  vfs.xAccess = Access;
  vfs.xFullPathname = FullPathname;
  vfs.xDlOpen = DlOpen;
  vfs.xDlError = DlError;
  vfs.xDlSym = DlSym;
  vfs.xDlClose = DlClose;
  vfs.xRandomness = Randomness;
  vfs.xSleep = Sleep;
  vfs.xCurrentTime = CurrentTime;
  vfs.xGetLastError = GetLastError;
  if (vfs.iVersion >= 2) vfs.xCurrentTimeInt64 = CurrentTimeInt64;
  if (vfs.iVersion >= 3) {
    vfs.xSetSystemCall = SetSystemCall;
    vfs.xGetSystemCall = GetSystemCall;
    vfs.xNextSystemCall = NextSystemCall;
  }
  return vfs;
}

}  // namespace vsc::store
