// Snapshot (replica_store.h): SQLite online backup into a temporary file, then rename.
#include <fcntl.h>
#include <sqlite3.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>

#include "replication/replica_store.h"
#include "store/database.h"

namespace vsc::replication {
namespace {

Status SyncDirectoryOf(const std::string& path) {
  std::string dir = std::filesystem::path(path).parent_path().string();
  if (dir.empty()) dir = ".";
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (fd < 0) return ErrnoStatus("snapshot: open directory " + dir, errno);
  const int rc = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  if (rc != 0) return ErrnoStatus("snapshot: fsync directory " + dir, err);
  return Status::Ok();
}

}  // namespace

Result<ReplicaState> Snapshot(const std::string& path, const std::string& out_path) {
  store::OpenOptions src_options;
  src_options.read_only = true;
  src_options.synchronous.clear();
  VSC_ASSIGN_OR_RETURN(store::Database src, store::Database::Open(path, src_options));

  const std::string tmp = out_path + ".partial";
  std::error_code ec;
  std::filesystem::remove(tmp, ec);
  store::OpenOptions dst_options;
  dst_options.wal = false;  // a rollback journal: the finished copy is one self-contained file
  dst_options.synchronous = "FULL";
  Status copied = Status::Ok();
  {
    VSC_ASSIGN_OR_RETURN(store::Database dst, store::Database::Open(tmp, dst_options));
    sqlite3_backup* backup = sqlite3_backup_init(dst.handle(), "main", src.handle(), "main");
    if (backup == nullptr) {
      return IoError("snapshot of '" + path + "': " + sqlite3_errmsg(dst.handle()));
    }
    // One step copies every page under one read transaction of the source: the copy is the
    // database as of one commit, even while the replica's writer keeps committing.
    const int rc = sqlite3_backup_step(backup, -1);
    const int finish = sqlite3_backup_finish(backup);
    if (rc != SQLITE_DONE || finish != SQLITE_OK) {
      copied =
          IoError("snapshot of '" + path + "' into '" + tmp + "': " + sqlite3_errmsg(dst.handle()));
    } else {
      // The backup copies the source's header, which says WAL: every later open of the copy
      // would make `<copy>-wal` and `-shm` (and a read-only open leaves them behind). Back to a
      // rollback journal while this connection is the copy's only one.
      copied = dst.Exec("PRAGMA journal_mode=DELETE").Annotate("snapshot into '" + tmp + "'");
    }
  }  // closed: nothing of the copy is open past here
  if (!copied.ok()) {
    std::filesystem::remove(tmp, ec);
    return copied;
  }
  auto state = ReadReplicaState(tmp);
  if (!state.ok()) {
    std::filesystem::remove(tmp, ec);
    return state.status();
  }
  if (std::rename(tmp.c_str(), out_path.c_str()) != 0) {
    Status st = ErrnoStatus("snapshot: rename " + tmp + " to " + out_path, errno);
    std::filesystem::remove(tmp, ec);
    return st;
  }
  VSC_RETURN_IF_ERROR(SyncDirectoryOf(out_path));
  return state;
}

}  // namespace vsc::replication
