#include "common/file_lock.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "support/temp_dir.h"

namespace vsc {
namespace {

namespace fs = std::filesystem;

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

Result<FileLock> Lock(const std::string& path) {
  return FileLock::Acquire(path, "test file", "give each holder its own file");
}

TEST(FileLockTest, HolderWritesItsPidIntoTheSidecar) {
  test_support::TempDir dir;
  const std::string db = dir.File("a.db");
  auto lock = Lock(db);
  ASSERT_TRUE(lock.ok()) << lock.status().ToString();
  EXPECT_EQ(lock->lock_path(), db + ".vsc-lock");
  EXPECT_EQ(ReadAll(db + ".vsc-lock"), std::to_string(::getpid()) + "\n");
  EXPECT_FALSE(fs::exists(db)) << "locking must not create the file it protects";
}

TEST(FileLockTest, SecondHolderInTheSameProcessIsRefusedWithPidAndAdvice) {
  test_support::TempDir dir;
  const std::string db = dir.File("a.db");
  auto first = Lock(db);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  auto second = Lock(db);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), Code::kFailedPrecondition);
  const std::string& m = second.status().message();
  EXPECT_NE(m.find("test file " + db + " is in use by process " + std::to_string(::getpid())),
            std::string::npos)
      << m;
  EXPECT_NE(m.find(db + ".vsc-lock"), std::string::npos) << m;
  EXPECT_NE(m.find("give each holder its own file"), std::string::npos) << m;
  // The refused attempt did not overwrite the holder's pid.
  EXPECT_EQ(ReadAll(db + ".vsc-lock"), std::to_string(::getpid()) + "\n");
}

TEST(FileLockTest, ReleasedOnDestructionAndTheSidecarIsKept) {
  test_support::TempDir dir;
  const std::string db = dir.File("a.db");
  {
    auto first = Lock(db);
    ASSERT_TRUE(first.ok());
  }
  EXPECT_TRUE(fs::exists(db + ".vsc-lock"));
  auto again = Lock(db);
  EXPECT_TRUE(again.ok()) << again.status().ToString();
}

TEST(FileLockTest, AnotherProcessIsNamedByItsPidAndTheLockDiesWithIt) {
  test_support::TempDir dir;
  const std::string db = dir.File("a.db");
  int to_child[2], to_parent[2];
  ASSERT_EQ(::pipe(to_child), 0);
  ASSERT_EQ(::pipe(to_parent), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto lock = Lock(db);
    const char ok = lock.ok() ? 'y' : 'n';
    if (::write(to_parent[1], &ok, 1) != 1) ::_exit(2);
    char go;
    if (::read(to_child[0], &go, 1) != 1) ::_exit(3);
    ::_exit(0);  // exits holding the lock: the kernel releases it
  }
  char ok = 0;
  ASSERT_EQ(::read(to_parent[0], &ok, 1), 1);
  ASSERT_EQ(ok, 'y');
  auto refused = Lock(db);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("in use by process " + std::to_string(child)),
            std::string::npos)
      << refused.status().message();
  const char go = 'x';
  ASSERT_EQ(::write(to_child[1], &go, 1), 1);
  int wstatus = 0;
  ASSERT_EQ(::waitpid(child, &wstatus, 0), child);
  ASSERT_TRUE(WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0);
  auto after = Lock(db);
  EXPECT_TRUE(after.ok()) << after.status().ToString();
  for (int fd : {to_child[0], to_child[1], to_parent[0], to_parent[1]}) ::close(fd);
}

TEST(FileLockTest, RenamingAFileOverTheProtectedOneKeepsTheLock) {
  test_support::TempDir dir;
  const std::string db = dir.File("a.db");
  { std::ofstream(db) << "old"; }
  auto lock = Lock(db);
  ASSERT_TRUE(lock.ok());
  { std::ofstream(dir.File("incoming")) << "new"; }
  ASSERT_EQ(std::rename(dir.File("incoming").c_str(), db.c_str()), 0);
  EXPECT_FALSE(Lock(db).ok());
}

TEST(FileLockTest, AbandonRemovesASidecarItCreatedAndKeepsOneThatExisted) {
  test_support::TempDir dir;
  const std::string fresh = dir.File("fresh.db");
  auto a = Lock(fresh);
  ASSERT_TRUE(a.ok());
  a->Abandon();
  EXPECT_FALSE(fs::exists(fresh + ".vsc-lock"));
  EXPECT_TRUE(Lock(fresh).ok()) << "abandoned means released";

  const std::string old = dir.File("old.db");
  { std::ofstream(old + ".vsc-lock") << "1\n"; }
  auto b = Lock(old);
  ASSERT_TRUE(b.ok());
  b->Abandon();
  EXPECT_TRUE(fs::exists(old + ".vsc-lock"));
  EXPECT_TRUE(Lock(old).ok());
}

TEST(FileLockTest, UnwritableDirectoryIsAnIoErrorNamingTheLockFile) {
  auto lock = Lock("/nonexistent-dir-for-vsc-test/a.db");
  ASSERT_FALSE(lock.ok());
  EXPECT_EQ(lock.status().code(), Code::kIo);
  EXPECT_NE(lock.status().message().find("/nonexistent-dir-for-vsc-test/a.db.vsc-lock"),
            std::string::npos)
      << lock.status().message();
}

}  // namespace
}  // namespace vsc
