#include "common/file_lock.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>

namespace vsc {
namespace {

constexpr int kAttempts = 8;

struct Opened {
  UniqueFd fd;
  bool created = false;
};

// Opens the sidecar, creating it when absent (O_EXCL tells whether this call created it).
Result<Opened> OpenOrCreate(const std::string& lock_path) {
  for (int i = 0; i < kAttempts; ++i) {
    int fd = ::open(lock_path.c_str(), O_RDWR | O_CLOEXEC);
    if (fd >= 0) return Opened{UniqueFd(fd), false};
    if (errno != ENOENT) return ErrnoStatus("opening lock file " + lock_path, errno);
    fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd >= 0) return Opened{UniqueFd(fd), true};
    if (errno != EEXIST) return ErrnoStatus("creating lock file " + lock_path, errno);
  }
  return IoError("cannot open lock file " + lock_path + ": it keeps appearing and vanishing");
}

// True when `fd` is still the file at `path` (not one a leaving holder removed meanwhile).
bool SameFile(int fd, const std::string& path) {
  struct stat a {
  }, b{};
  if (::fstat(fd, &a) != 0 || ::stat(path.c_str(), &b) != 0) return false;
  return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

// The pid the holder wrote, or "" when the file holds none (yet).
std::string HolderPid(int fd) {
  char buf[32];
  const ssize_t n = ::pread(fd, buf, sizeof buf, 0);
  std::string pid;
  for (ssize_t i = 0; i < n && std::isdigit(static_cast<unsigned char>(buf[i])); ++i) {
    pid += buf[i];
  }
  return pid;
}

}  // namespace

std::string FileLock::LockPathFor(const std::string& path) { return path + ".vsc-lock"; }

Result<FileLock> FileLock::Acquire(const std::string& path, std::string_view what,
                                   std::string_view advice) {
  const std::string lock_path = LockPathFor(path);
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    VSC_ASSIGN_OR_RETURN(Opened o, OpenOrCreate(lock_path));
    struct flock fl {};
    fl.l_type = F_WRLCK;
    fl.l_whence = SEEK_SET;
    if (::fcntl(o.fd.get(), F_OFD_SETLK, &fl) != 0) {
      const int err = errno;
      if (err != EAGAIN && err != EACCES) return ErrnoStatus("locking " + lock_path, err);
      const std::string pid = HolderPid(o.fd.get());
      return FailedPrecondition(std::string(what) + " " + path + " is in use by " +
                                (pid.empty() ? "another process" : "process " + pid) + " (lock " +
                                lock_path + "); " + std::string(advice));
    }
    // A holder that abandoned its new sidecar may have removed it between our open and our
    // lock: then we hold a lock nobody else can see. Start over on the file now at the path.
    if (!SameFile(o.fd.get(), lock_path)) continue;
    const std::string text = std::to_string(::getpid()) + "\n";
    if (::ftruncate(o.fd.get(), 0) != 0 ||
        ::pwrite(o.fd.get(), text.data(), text.size(), 0) != static_cast<ssize_t>(text.size())) {
      return ErrnoStatus("writing the pid to " + lock_path, errno);
    }
    return FileLock(std::move(o.fd), lock_path, o.created);
  }
  return IoError("cannot lock " + lock_path +
                 ": it keeps being replaced; is another process "
                 "starting and stopping on the same file?");
}

void FileLock::Abandon() {
  if (!fd_.valid()) return;
  if (created_) ::unlink(lock_path_.c_str());  // while still held: nobody else can own it
  fd_.Reset();
}

}  // namespace vsc
