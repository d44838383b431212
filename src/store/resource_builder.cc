#include "store/resource_builder.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "common/random.h"
#include "store/database.h"
#include "store/resource_store.h"
#include "store/statement.h"

namespace vsc::store {
namespace {

constexpr uint64_t kMinSize = 64 * 1024;
constexpr uint64_t kMaxSize = uint64_t{4} << 30;
constexpr uint64_t kUpdatedSpanSeconds = 5 * 365 * 24 * 3600;
// Rows per transaction: journaling is off during the build, so a transaction only bounds how
// much dirty cache SQLite holds before writing.
constexpr uint64_t kRowsPerTransaction = 100'000;
constexpr uint64_t kProgressEvery = 16'384;

bool Exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

Status AlreadyThere(const std::string& path) {
  return AlreadyExists("refusing to replace '" + path +
                       "'; remove it or ask to overwrite it (vsc loaddb --force)");
}

Status RemoveIfPresent(const std::string& path) {
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) return ErrnoStatus("remove " + path, errno);
  return Status::Ok();
}

Status SyncPath(const std::string& path, bool directory) {
  int fd = ::open(path.c_str(), (directory ? O_RDONLY | O_DIRECTORY : O_RDWR) | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus("open " + path, errno);
  int rc = ::fsync(fd);
  int err = errno;
  ::close(fd);
  if (rc != 0) return ErrnoStatus("fsync " + path, err);
  return Status::Ok();
}

std::string DirectoryOf(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

Status FillRows(Database& db, const BuildOptions& options,
                const std::function<void(uint64_t, uint64_t)>& progress) {
  VSC_RETURN_IF_ERROR(
      db.Exec("PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA locking_mode=EXCLUSIVE;"
              "PRAGMA cache_size=-65536"));
  VSC_RETURN_IF_ERROR(CreateResourceSchema(db));
  VSC_ASSIGN_OR_RETURN(Statement insert,
                       db.Prepare("INSERT INTO resources(id, node, size, updated_at) "
                                  "VALUES(?1, ?2, ?3, ?4)",
                                  true));
  std::vector<std::string> names(options.nodes);
  char buf[32];
  for (uint32_t n = 0; n < options.nodes; ++n) {
    int len = std::snprintf(buf, sizeof buf, "node-%04u", n);
    names[n].assign(buf, static_cast<size_t>(len));
  }

  Random rng(options.seed);
  const uint64_t total = options.records;
  if (progress) progress(0, total);
  for (uint64_t id = 1; id <= total;) {
    VSC_RETURN_IF_ERROR(db.Exec("BEGIN"));
    const uint64_t end = std::min(total, id + kRowsPerTransaction - 1);
    for (; id <= end; ++id) {
      // Draw order is part of the content contract: node, size, updated_at.
      const std::string& node = names[rng.Uniform(options.nodes)];
      const uint64_t size = kMinSize + rng.Uniform(kMaxSize - kMinSize);
      const int64_t updated_at =
          kResourceBaseUnixSeconds + static_cast<int64_t>(rng.Uniform(kUpdatedSpanSeconds));
      VSC_RETURN_IF_ERROR(insert.BindInt64(1, static_cast<int64_t>(id)));
      VSC_RETURN_IF_ERROR(insert.Bind(2, node));
      VSC_RETURN_IF_ERROR(insert.BindInt64(3, static_cast<int64_t>(size)));
      VSC_RETURN_IF_ERROR(insert.BindInt64(4, updated_at));
      VSC_RETURN_IF_ERROR(insert.Run());
      if (progress && id % kProgressEvery == 0) progress(id, total);
    }
    VSC_RETURN_IF_ERROR(db.Exec("COMMIT"));
  }
  if (progress) progress(total, total);
  return Status::Ok();
}

Status Build(const BuildOptions& options, const std::string& tmp,
             const std::function<void(uint64_t, uint64_t)>& progress) {
  {
    OpenOptions fast;
    fast.wal = false;
    fast.synchronous = "OFF";
    VSC_ASSIGN_OR_RETURN(Database db, Database::Open(tmp, fast));
    VSC_RETURN_IF_ERROR(FillRows(db, options, progress));
  }
  {
    // A fresh connection in normal locking mode turns WAL on (the mode is recorded in the file
    // header); closing the last connection checkpoints and removes the -wal file.
    OpenOptions wal;
    wal.synchronous = "FULL";
    VSC_ASSIGN_OR_RETURN(Database db, Database::Open(tmp, wal));
  }
  // The rows were written with synchronous=OFF: make them durable before the file takes the
  // real name.
  return SyncPath(tmp, false);
}

}  // namespace

Result<BuildStats> BuildResourceDb(const BuildOptions& options,
                                   const std::function<void(uint64_t, uint64_t)>& progress) {
  if (options.path.empty()) return InvalidArgument("resource db: no output path given");
  if (options.nodes == 0) return InvalidArgument("resource db: nodes must be at least 1");
  if (options.records > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    return InvalidArgument("resource db: records must fit a signed 64-bit id");
  }
  if (!options.overwrite && Exists(options.path)) return AlreadyThere(options.path);

  const std::string tmp = options.path + ".tmp-" + std::to_string(::getpid());
  // Leftovers of an earlier crashed build by a process that had our pid.
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) {
    VSC_RETURN_IF_ERROR(RemoveIfPresent(tmp + suffix));
  }
  int fd = ::open(tmp.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0666);
  if (fd < 0) {
    return ErrnoStatus("create " + tmp, errno)
        .Annotate("building resource db '" + options.path + "'");
  }
  ::close(fd);

  Status st = Build(options, tmp, progress);
  if (st.ok()) {
    if (options.overwrite) {
      // A stale -wal of the old file would be replayed into the new one.
      for (const char* suffix : {"-wal", "-shm", "-journal"}) {
        st = RemoveIfPresent(options.path + suffix);
        if (!st.ok()) break;
      }
      if (st.ok() && ::rename(tmp.c_str(), options.path.c_str()) != 0) {
        st = ErrnoStatus("rename " + tmp + " to " + options.path, errno);
      }
    } else if (::link(tmp.c_str(), options.path.c_str()) != 0) {
      // link() fails with EEXIST if someone created `path` while we were building.
      st = errno == EEXIST ? AlreadyThere(options.path)
                           : ErrnoStatus("link " + tmp + " to " + options.path, errno);
    }
  }
  // After link(), or after a failure (then with whatever SQLite left beside it).
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) (void)RemoveIfPresent(tmp + suffix);
  if (!st.ok()) return st.Annotate("building resource db '" + options.path + "'");
  VSC_RETURN_IF_ERROR(SyncPath(DirectoryOf(options.path), true));

  struct stat info;
  if (::stat(options.path.c_str(), &info) != 0) return ErrnoStatus("stat " + options.path, errno);
  return BuildStats{options.records, static_cast<uint64_t>(info.st_size)};
}

}  // namespace vsc::store
