#include "store/resource_store.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "common/random.h"
#include "store/database.h"
#include "store/resource_builder.h"
#include "support/temp_dir.h"

namespace vsc::store {
namespace {

using ::testing::HasSubstr;
using test_support::TempDir;

constexpr uint64_t kRecords = 10'000;

// One built database shared by the tests of this suite (building is the slow part).
class ResourceStoreTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    path_ = dir_->File("resources.db");
    BuildOptions options;
    options.path = path_;
    options.records = kRecords;
    options.nodes = 16;
    options.seed = 7;
    Result<BuildStats> stats = BuildResourceDb(options, nullptr);
    ASSERT_TRUE(stats.ok()) << stats.status().ToString();

    // The expected answers, read through a different path than the one under test: a full
    // scan on an ordinary connection.
    Result<Database> db = Database::Open(path_);
    ASSERT_TRUE(db.ok());
    Result<Statement> scan = db->Prepare("SELECT id, node FROM resources ORDER BY id");
    ASSERT_TRUE(scan.ok());
    expected_ = new std::vector<std::string>(kRecords + 1);
    for (;;) {
      Result<bool> row = scan->Step();
      ASSERT_TRUE(row.ok());
      if (!*row) break;
      (*expected_)[static_cast<size_t>(scan->ColumnInt64(0))] = std::string(scan->ColumnText(1));
    }
  }
  static void TearDownTestSuite() {
    delete expected_;
    delete dir_;
  }

  static ResourceReader OpenReader() {
    Result<ResourceReader> r = ResourceReader::Open(path_);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return std::move(r).value();
  }

  static inline TempDir* dir_ = nullptr;
  static inline std::string path_;
  static inline std::vector<std::string>* expected_ = nullptr;  // index = id
};

TEST_F(ResourceStoreTest, RandomBatchesMatchAFullScan) {
  ResourceReader reader = OpenReader();
  Random rng(99);
  std::vector<LookupResult> out;
  std::vector<uint64_t> ids;
  size_t found = 0, missing = 0;
  for (int round = 0; round < 5000; ++round) {
    // Every few rounds toggle a shared snapshot: results must not depend on it.
    if (round % 7 == 0) {
      ASSERT_TRUE((reader.in_batch() ? reader.EndBatch() : reader.BeginBatch()).ok());
    }
    ids.resize(1 + rng.Uniform(kMaxLookupIds));
    for (uint64_t& id : ids) {
      // Mostly present ids, some just past the end, some reused from this batch (duplicates).
      uint64_t pick = rng.Uniform(10);
      if (pick == 0) {
        id = kRecords + 1 + rng.Uniform(1000);
      } else if (pick == 1 && &id != ids.data()) {
        id = ids[rng.Uniform(static_cast<uint64_t>(&id - ids.data()))];
      } else {
        id = 1 + rng.Uniform(kRecords);
      }
    }
    ASSERT_TRUE(reader.Lookup(ids, out).ok());
    ASSERT_EQ(out.size(), ids.size());
    for (size_t i = 0; i < ids.size(); ++i) {
      ASSERT_EQ(out[i].id, ids[i]) << "answers come back in request order";
      if (ids[i] <= kRecords) {
        ASSERT_TRUE(out[i].found) << ids[i];
        ASSERT_EQ(out[i].node, (*expected_)[ids[i]]) << ids[i];
        ++found;
      } else {
        ASSERT_FALSE(out[i].found) << ids[i];
        ASSERT_TRUE(out[i].node.empty()) << "a not-found entry must not keep an old node";
        ++missing;
      }
    }
  }
  EXPECT_GT(found, 10'000u);  // the generator exercised both paths
  EXPECT_GT(missing, 100u);
}

TEST_F(ResourceStoreTest, EveryRecordIsFoundOnce) {
  ResourceReader reader = OpenReader();
  std::vector<LookupResult> out;
  std::vector<uint64_t> ids;
  for (uint64_t id = 1; id <= kRecords; ++id) {
    ids.push_back(id);
    if (ids.size() == kMaxLookupIds || id == kRecords) {
      ASSERT_TRUE(reader.Lookup(ids, out).ok());
      for (size_t i = 0; i < ids.size(); ++i) {
        ASSERT_TRUE(out[i].found);
        ASSERT_EQ(out[i].node, (*expected_)[ids[i]]);
      }
      ids.clear();
    }
  }
}

TEST_F(ResourceStoreTest, EdgeIdsAreNotFound) {
  ResourceReader reader = OpenReader();
  std::vector<LookupResult> out;
  const uint64_t int64_max = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  std::vector<uint64_t> ids = {0, kRecords + 1, int64_max, int64_max + 1, UINT64_MAX, 1, kRecords};
  ASSERT_TRUE(reader.Lookup(ids, out).ok());
  ASSERT_EQ(out.size(), ids.size());
  for (size_t i = 0; i < 5; ++i) EXPECT_FALSE(out[i].found) << ids[i];
  EXPECT_TRUE(out[5].found);
  EXPECT_TRUE(out[6].found);
  EXPECT_EQ(out[6].node, (*expected_)[kRecords]);
}

TEST_F(ResourceStoreTest, DuplicatesAreAnsweredEachTimeInOrder) {
  ResourceReader reader = OpenReader();
  std::vector<LookupResult> out;
  std::vector<uint64_t> ids = {5, 5, 0, 5, 9, 0, 9};
  ASSERT_TRUE(reader.Lookup(ids, out).ok());
  ASSERT_EQ(out.size(), 7u);
  for (size_t i = 0; i < ids.size(); ++i) {
    EXPECT_EQ(out[i].id, ids[i]);
    EXPECT_EQ(out[i].found, ids[i] != 0);
    EXPECT_EQ(out[i].node, ids[i] != 0 ? (*expected_)[ids[i]] : "");
  }
}

TEST_F(ResourceStoreTest, RequestSizeIsBounded) {
  ResourceReader reader = OpenReader();
  std::vector<LookupResult> out(3);
  Status none = reader.Lookup({}, out);
  EXPECT_EQ(none.code(), Code::kInvalidArgument);
  EXPECT_EQ(none.message(), "lookup of 0 ids: a request carries 1 to 10 ids");
  EXPECT_TRUE(out.empty());

  std::vector<uint64_t> eleven(kMaxLookupIds + 1, 1);
  out.resize(2);
  Status too_many = reader.Lookup(eleven, out);
  EXPECT_EQ(too_many.code(), Code::kInvalidArgument);
  EXPECT_THAT(too_many.message(), HasSubstr("lookup of 11 ids"));
  EXPECT_TRUE(out.empty());

  std::vector<uint64_t> ten(kMaxLookupIds, 1);
  EXPECT_TRUE(reader.Lookup(ten, out).ok());
  EXPECT_EQ(out.size(), kMaxLookupIds);
}

TEST_F(ResourceStoreTest, ReusedResultsDoNotReallocate) {
  ResourceReader reader = OpenReader();
  std::vector<LookupResult> out;
  std::vector<uint64_t> ids(kMaxLookupIds);
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = i + 1;
  ASSERT_TRUE(reader.Lookup(ids, out).ok());
  const LookupResult* vec_data = out.data();
  std::vector<const char*> str_data;
  for (const LookupResult& r : out) str_data.push_back(r.node.data());
  Random rng(3);
  for (int round = 0; round < 200; ++round) {
    std::vector<uint64_t> batch(1 + rng.Uniform(kMaxLookupIds));
    for (uint64_t& id : batch) id = rng.Uniform(kRecords + 10);
    ASSERT_TRUE(reader.Lookup(batch, out).ok());
    ASSERT_EQ(out.data(), vec_data);
    for (size_t i = 0; i < out.size(); ++i) ASSERT_EQ(out[i].node.data(), str_data[i]);
  }
}

TEST_F(ResourceStoreTest, ReaderSeesCommittedUpdates) {
  TempDir dir;
  std::string path = dir.File("live.db");
  BuildOptions options;
  options.path = path;
  options.records = 100;
  ASSERT_TRUE(BuildResourceDb(options, nullptr).ok());
  Result<ResourceReader> live = ResourceReader::Open(path);
  ASSERT_TRUE(live.ok());

  Result<Database> writer = Database::Open(path);
  ASSERT_TRUE(writer.ok());
  ASSERT_TRUE(writer
                  ->Exec("BEGIN IMMEDIATE;"
                         "UPDATE resources SET node = 'node-moved' WHERE id = 3;"
                         "DELETE FROM resources WHERE id = 4;"
                         "INSERT INTO resources VALUES(500, 'node-new', 1, 2)")
                  .ok());
  std::vector<uint64_t> ids = {3, 4, 500};
  std::vector<LookupResult> out;
  ASSERT_TRUE(live->Lookup(ids, out).ok());
  EXPECT_NE(out[0].node, "node-moved");  // uncommitted: invisible
  EXPECT_TRUE(out[1].found);
  EXPECT_FALSE(out[2].found);
  ASSERT_TRUE(writer->Exec("COMMIT").ok());
  ASSERT_TRUE(live->Lookup(ids, out).ok());
  EXPECT_EQ(out[0].node, "node-moved");
  EXPECT_FALSE(out[1].found);
  EXPECT_TRUE(out[2].found);
  EXPECT_EQ(out[2].node, "node-new");
}

TEST_F(ResourceStoreTest, BatchSharesOneSnapshot) {
  TempDir dir;
  std::string path = dir.File("batch.db");
  BuildOptions options;
  options.path = path;
  options.records = 50;
  ASSERT_TRUE(BuildResourceDb(options, nullptr).ok());
  Result<ResourceReader> reader = ResourceReader::Open(path);
  ASSERT_TRUE(reader.ok());
  OpenOptions impatient;
  impatient.busy_timeout_ms = 0;
  Result<Database> writer = Database::Open(path, impatient);
  ASSERT_TRUE(writer.ok());

  EXPECT_EQ(reader->EndBatch().code(), Code::kFailedPrecondition);
  ASSERT_TRUE(reader->BeginBatch().ok());
  EXPECT_TRUE(reader->in_batch());
  EXPECT_EQ(reader->BeginBatch().code(), Code::kFailedPrecondition);

  std::vector<uint64_t> one = {7};
  std::vector<uint64_t> two = {8, 60};
  std::vector<LookupResult> out;
  ASSERT_TRUE(reader->Lookup(one, out).ok());
  ASSERT_TRUE(out[0].found);
  const std::string before = out[0].node;
  ASSERT_TRUE(writer
                  ->Exec("UPDATE resources SET node = 'node-x' WHERE id = 7;"
                         "INSERT INTO resources VALUES(60, 'node-y', 1, 1)")
                  .ok());
  // Committed, but after the batch's snapshot was taken: still the old view, for single and
  // multi-id lookups alike.
  ASSERT_TRUE(reader->Lookup(one, out).ok());
  EXPECT_EQ(out[0].node, before);
  ASSERT_TRUE(reader->Lookup(two, out).ok());
  EXPECT_TRUE(out[0].found);
  EXPECT_FALSE(out[1].found);
  // A wrong request inside a batch does not end it.
  EXPECT_EQ(reader->Lookup({}, out).code(), Code::kInvalidArgument);
  EXPECT_TRUE(reader->in_batch());

  ASSERT_TRUE(reader->EndBatch().ok());
  EXPECT_FALSE(reader->in_batch());
  ASSERT_TRUE(reader->Lookup(one, out).ok());
  EXPECT_EQ(out[0].node, "node-x");
  ASSERT_TRUE(reader->Lookup(two, out).ok());
  EXPECT_EQ(out[1].node, "node-y");

  // A reader destroyed or moved-over inside a batch releases its snapshot: the writer can then
  // checkpoint the whole WAL.
  ASSERT_TRUE(reader->BeginBatch().ok());
  ASSERT_TRUE(reader->Lookup(one, out).ok());
  ResourceReader moved = std::move(*reader);
  EXPECT_TRUE(moved.in_batch());
  EXPECT_FALSE(reader->in_batch());  // NOLINT: checking the moved-from state on purpose
  ASSERT_TRUE(writer->Exec("UPDATE resources SET node = 'node-z' WHERE id = 7").ok());
  auto checkpoint_blocked = [&] {
    Result<Statement> ckpt = writer->Prepare("PRAGMA wal_checkpoint(TRUNCATE)");
    EXPECT_TRUE(ckpt.ok());
    Result<bool> row = ckpt->Step();
    EXPECT_TRUE(row.ok() && *row);
    return ckpt->ColumnInt64(0) != 0;  // 1: SQLITE_BUSY, a reader holds an older snapshot
  };
  EXPECT_TRUE(checkpoint_blocked());
  { ResourceReader gone = std::move(moved); }
  EXPECT_FALSE(checkpoint_blocked());
}

TEST(ResourceReaderOpenTest, ClearErrors) {
  TempDir dir;
  Result<ResourceReader> missing = ResourceReader::Open(dir.File("absent.db"));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), Code::kIo);
  EXPECT_THAT(missing.status().message(), HasSubstr(dir.File("absent.db")));

  std::string empty = dir.File("empty.db");
  {
    Result<Database> db = Database::Open(empty);
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE(db->Exec("CREATE TABLE other(x)").ok());
  }
  Result<ResourceReader> no_table = ResourceReader::Open(empty);
  ASSERT_FALSE(no_table.ok());
  EXPECT_EQ(no_table.status().code(), Code::kInvalidArgument);
  EXPECT_THAT(no_table.status().message(), HasSubstr("no such table: resources"));
  EXPECT_THAT(no_table.status().message(), HasSubstr("vsc loaddb"));
}

TEST(ResourceSchemaTest, CreateIsIdempotentAndEnforcesNotNull) {
  Result<Database> db = Database::Open(":memory:");
  ASSERT_TRUE(db.ok());
  ASSERT_TRUE(CreateResourceSchema(*db).ok());
  ASSERT_TRUE(CreateResourceSchema(*db).ok());
  EXPECT_TRUE(db->Exec("INSERT INTO resources VALUES(1, 'node-0001', 10, 20)").ok());
  EXPECT_EQ(db->Exec("INSERT INTO resources(id) VALUES(2)").code(), Code::kFailedPrecondition);
  EXPECT_EQ(db->Exec("INSERT INTO resources VALUES(1, 'x', 0, 0)").code(), Code::kAlreadyExists);
}

}  // namespace
}  // namespace vsc::store
