// FileLock: "this process owns FILE" — an exclusive advisory lock that keeps a second daemon off
// a file only one may write (a real server's replica database and its WAL, the director's
// replication log).
//
// The lock is an open-file-description lock (fcntl F_OFD_SETLK, whole file, never waits) on a
// sidecar file `<FILE>.vsc-lock`, not on FILE itself: SQLite takes POSIX locks on the database
// and a process-wide POSIX lock of ours would mix with them (closing any descriptor of the file
// drops every POSIX lock of the process). The sidecar holds the holder's pid in decimal, so the
// refusal can name it. The kernel releases the lock when the holder exits, even by SIGKILL: a
// lock file left behind is harmless and is kept (deleting lock files races with new holders).
// Renaming FILE (a snapshot installed over the database) does not touch the lock.
//
// Two FileLocks on one path conflict even inside one process (separate open file descriptions).
// Not thread safe; move-only; the lock lasts as long as the object.
#pragma once

#include <string>
#include <string_view>

#include "common/status.h"
#include "common/unique_fd.h"

namespace vsc {

class FileLock {
 public:
  // The sidecar of `path`: path + ".vsc-lock".
  static std::string LockPathFor(const std::string& path);

  // Takes the lock of `path` without waiting. `what` names the file for errors ("replica
  // database"), `advice` says what to do when it is taken. Fails with kFailedPrecondition when
  // another holder has it: "replica database rs.db is in use by process 1234 (lock
  // rs.db.vsc-lock); <advice>"; with kIo when the sidecar cannot be created or locked.
  static Result<FileLock> Acquire(const std::string& path, std::string_view what,
                                  std::string_view advice);

  FileLock(FileLock&&) = default;
  FileLock& operator=(FileLock&&) = default;
  ~FileLock() = default;  // closing the descriptor releases the lock; the file stays

  // Releases the lock and, if Acquire created the sidecar, removes it: for a start-up that
  // failed before it wrote anything, so the disk is left as it was found.
  void Abandon();

  const std::string& lock_path() const { return lock_path_; }

 private:
  FileLock(UniqueFd fd, std::string lock_path, bool created)
      : fd_(std::move(fd)), lock_path_(std::move(lock_path)), created_(created) {}

  UniqueFd fd_;
  std::string lock_path_;
  bool created_ = false;
};

}  // namespace vsc
