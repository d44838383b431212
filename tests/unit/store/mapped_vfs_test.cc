#include "store/mapped_vfs.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "store/database.h"
#include "store/statement.h"
#include "support/temp_dir.h"

namespace vsc::store {
namespace {

using test_support::TempDir;

// A writer (default VFS, WAL) and a reader that keeps its map, on one file, the way a replica's
// writer thread and its lookup workers share a database.
class MappedVfsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = dir_.path() + "/db";
    auto w = Database::Open(path_);
    ASSERT_TRUE(w.ok()) << w.status().ToString();
    writer_.emplace(std::move(w).value());
    ASSERT_TRUE(writer_->Exec("PRAGMA wal_autocheckpoint=0").ok());
    ASSERT_TRUE(writer_->Exec("CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT)").ok());
    ASSERT_TRUE(writer_
                    ->Exec("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n "
                           "WHERE i<5000) INSERT INTO t SELECT i, printf('v%05d', i) FROM n")
                    .ok());
    Checkpoint();
    OpenOptions o;
    o.read_only = true;
    o.mmap_bytes = int64_t{1} << 30;
    o.keep_map = true;
    auto r = Database::Open(path_, o);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    reader_.emplace(std::move(r).value());
  }

  void Checkpoint() { ASSERT_TRUE(writer_->Exec("PRAGMA wal_checkpoint(TRUNCATE)").ok()); }

  std::string ReadValue(int64_t id) {
    auto st = reader_->Prepare("SELECT v FROM t WHERE id=?1");
    EXPECT_TRUE(st.ok()) << st.status().ToString();
    EXPECT_TRUE(st->BindInt64(1, id).ok());
    auto row = st->Step();
    EXPECT_TRUE(row.ok()) << row.status().ToString();
    return row.ok() && *row ? std::string(st->ColumnText(0)) : std::string("<none>");
  }

  int64_t ReadCount() {
    auto st = reader_->Prepare("SELECT count(*), sum(length(v)) FROM t");
    EXPECT_TRUE(st.ok());
    auto row = st->Step();
    EXPECT_TRUE(row.ok() && *row);
    return st->ColumnInt64(0);
  }

  TempDir dir_;
  std::string path_;
  std::optional<Database> writer_;
  std::optional<Database> reader_;
};

TEST_F(MappedVfsTest, MapIsKeptAcrossCommitsAndReadsSeeEveryCommit) {
  ASSERT_EQ(ReadValue(1), "v00001");  // maps the file
  const MappedVfsStats before = GetMappedVfsStats();
  for (int i = 0; i < 50; ++i) {
    const int64_t id = 1 + (i * 97) % 5000;
    const std::string v = "new" + std::to_string(i);
    ASSERT_TRUE(writer_->Exec("UPDATE t SET v='" + v + "' WHERE id=" + std::to_string(id)).ok());
    ASSERT_EQ(ReadValue(id), v) << "commit " << i;
    if (i % 10 == 9) {
      // Checkpointed pages come to the reader through the same (shared) map.
      Checkpoint();
      ASSERT_EQ(ReadValue(id), v) << "after checkpoint " << i;
    }
  }
  const MappedVfsStats after = GetMappedVfsStats();
  EXPECT_GE(after.kept - before.kept, 50u);
  EXPECT_EQ(after.dropped, before.dropped);
}

TEST_F(MappedVfsTest, MapIsDroppedWhenTheFileGrowsOrShrinks) {
  ASSERT_EQ(ReadCount(), 5000);
  MappedVfsStats before = GetMappedVfsStats();
  ASSERT_TRUE(writer_
                  ->Exec("WITH RECURSIVE n(i) AS (SELECT 5001 UNION ALL SELECT i+1 FROM n "
                         "WHERE i<60000) INSERT INTO t SELECT i, printf('v%05d', i) FROM n")
                  .ok());
  Checkpoint();  // the file grows
  EXPECT_EQ(ReadCount(), 60000);
  EXPECT_EQ(ReadValue(59999), "v59999");
  EXPECT_GT(GetMappedVfsStats().dropped, before.dropped);

  before = GetMappedVfsStats();
  ASSERT_TRUE(writer_->Exec("DELETE FROM t WHERE id > 100").ok());
  ASSERT_TRUE(writer_->Exec("VACUUM").ok());
  Checkpoint();  // the file shrinks: a kept map would reach past its end
  EXPECT_EQ(ReadCount(), 100);
  EXPECT_EQ(ReadValue(100), "v00100");
  EXPECT_EQ(ReadValue(101), "<none>");
  EXPECT_GT(GetMappedVfsStats().dropped, before.dropped);
}

}  // namespace
}  // namespace vsc::store
