#include "store/mapped_vfs.h"

#include <sqlite3.h>

#include <atomic>
#include <mutex>

#include "store/vfs_forwarding.h"

namespace vsc::store {
namespace {

std::atomic<uint64_t> g_kept{0};
std::atomic<uint64_t> g_dropped{0};

sqlite3_vfs g_vfs;
sqlite3_io_methods g_methods;

// Our file: the base VFS's file follows it in the same allocation (szOsFile covers both).
struct MappedFile {
  sqlite3_file file;  // pMethods = &g_methods
  sqlite3_file* real;
  bool main_db;
  // The file's size when the base VFS made its current map; -1 when it has none (or the size is
  // unknown), so the next fetch, which makes one, records it.
  sqlite3_int64 mapped_size;
};

sqlite3_file* Real(sqlite3_file* f) { return reinterpret_cast<MappedFile*>(f)->real; }

int Close(sqlite3_file* f) { return Real(f)->pMethods->xClose(Real(f)); }
int Read(sqlite3_file* f, void* buf, int n, sqlite3_int64 off) {
  return Real(f)->pMethods->xRead(Real(f), buf, n, off);
}
int Write(sqlite3_file* f, const void* buf, int n, sqlite3_int64 off) {
  return Real(f)->pMethods->xWrite(Real(f), buf, n, off);
}
int Truncate(sqlite3_file* f, sqlite3_int64 size) {
  return Real(f)->pMethods->xTruncate(Real(f), size);
}
int Sync(sqlite3_file* f, int flags) { return Real(f)->pMethods->xSync(Real(f), flags); }
int FileSize(sqlite3_file* f, sqlite3_int64* out) {
  return Real(f)->pMethods->xFileSize(Real(f), out);
}
int Lock(sqlite3_file* f, int level) { return Real(f)->pMethods->xLock(Real(f), level); }
int Unlock(sqlite3_file* f, int level) { return Real(f)->pMethods->xUnlock(Real(f), level); }
int CheckReservedLock(sqlite3_file* f, int* out) {
  return Real(f)->pMethods->xCheckReservedLock(Real(f), out);
}
int FileControl(sqlite3_file* f, int op, void* arg) {
  return Real(f)->pMethods->xFileControl(Real(f), op, arg);
}
int SectorSize(sqlite3_file* f) { return Real(f)->pMethods->xSectorSize(Real(f)); }
int DeviceCharacteristics(sqlite3_file* f) {
  return Real(f)->pMethods->xDeviceCharacteristics(Real(f));
}
int ShmMap(sqlite3_file* f, int region, int size, int extend, void volatile** out) {
  return Real(f)->pMethods->xShmMap(Real(f), region, size, extend, out);
}
int ShmLock(sqlite3_file* f, int offset, int n, int flags) {
  return Real(f)->pMethods->xShmLock(Real(f), offset, n, flags);
}
void ShmBarrier(sqlite3_file* f) { Real(f)->pMethods->xShmBarrier(Real(f)); }
int ShmUnmap(sqlite3_file* f, int delete_flag) {
  return Real(f)->pMethods->xShmUnmap(Real(f), delete_flag);
}

int Fetch(sqlite3_file* f, sqlite3_int64 off, int n, void** out) {
  auto* m = reinterpret_cast<MappedFile*>(f);
  if (m->main_db && m->mapped_size < 0) {
    // The base VFS maps the whole file at this fetch: remember the size it maps.
    sqlite3_int64 size = 0;
    if (FileSize(f, &size) == SQLITE_OK) m->mapped_size = size;
  }
  return m->real->pMethods->xFetch(m->real, off, n, out);
}

int Unfetch(sqlite3_file* f, sqlite3_int64 off, void* p) {
  auto* m = reinterpret_cast<MappedFile*>(f);
  if (p == nullptr && m->main_db) {
    // "Drop the whole map" (SQLite asks only with no page of it in use).
    sqlite3_int64 size = -1;
    if (m->mapped_size >= 0 && FileSize(f, &size) == SQLITE_OK && size == m->mapped_size) {
      g_kept.fetch_add(1, std::memory_order_relaxed);
      return SQLITE_OK;
    }
    g_dropped.fetch_add(1, std::memory_order_relaxed);
    m->mapped_size = -1;
  }
  return m->real->pMethods->xUnfetch(m->real, off, p);
}

int OpenMapped(sqlite3_vfs* vfs, sqlite3_filename name, sqlite3_file* file, int flags,
               int* out_flags) {
  auto* m = reinterpret_cast<MappedFile*>(file);
  m->real = reinterpret_cast<sqlite3_file*>(m + 1);
  m->main_db = (flags & SQLITE_OPEN_MAIN_DB) != 0;
  m->mapped_size = -1;
  m->file.pMethods = nullptr;
  const int rc = BaseOf(vfs)->xOpen(BaseOf(vfs), name, m->real, flags, out_flags);
  if (m->real->pMethods == nullptr) return rc;
  if (m->real->pMethods->iVersion < 3) {
    // Our methods forward the version-3 ones (shared memory, fetch), which unix files have.
    m->real->pMethods->xClose(m->real);
    return SQLITE_CANTOPEN;
  }
  // A base file with methods must be closed through ours, even after a failed open.
  m->file.pMethods = &g_methods;
  return rc;
}

}  // namespace

int RegisterMappedVfs() {
  static std::once_flag once;
  static int rc = SQLITE_OK;
  std::call_once(once, [] {
    rc = sqlite3_initialize();
    if (rc != SQLITE_OK) return;
    sqlite3_vfs* base = sqlite3_vfs_find(nullptr);
    if (base == nullptr) {
      rc = SQLITE_ERROR;
      return;
    }
    g_vfs = ForwardingVfs(base, kMappedVfsName);
    g_vfs.szOsFile = static_cast<int>(sizeof(MappedFile)) + base->szOsFile;
    g_vfs.xOpen = OpenMapped;
    // Version 3: the shared-memory (WAL) and fetch methods, which SQLite's unix files have.
    g_methods = sqlite3_io_methods{};
    g_methods.iVersion = 3;
    g_methods.xClose = Close;
    g_methods.xRead = Read;
    g_methods.xWrite = Write;
    g_methods.xTruncate = Truncate;
    g_methods.xSync = Sync;
    g_methods.xFileSize = FileSize;
    g_methods.xLock = Lock;
    g_methods.xUnlock = Unlock;
    g_methods.xCheckReservedLock = CheckReservedLock;
    g_methods.xFileControl = FileControl;
    g_methods.xSectorSize = SectorSize;
    g_methods.xDeviceCharacteristics = DeviceCharacteristics;
    g_methods.xShmMap = ShmMap;
    g_methods.xShmLock = ShmLock;
    g_methods.xShmBarrier = ShmBarrier;
    g_methods.xShmUnmap = ShmUnmap;
    g_methods.xFetch = Fetch;
    g_methods.xUnfetch = Unfetch;
    rc = sqlite3_vfs_register(&g_vfs, 0);
  });
  return rc;
}

MappedVfsStats GetMappedVfsStats() {
  return {g_kept.load(std::memory_order_relaxed), g_dropped.load(std::memory_order_relaxed)};
}

}  // namespace vsc::store
