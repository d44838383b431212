#include "store/resource_builder.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "store/database.h"
#include "store/resource_store.h"
#include "support/temp_dir.h"

namespace vsc::store {
namespace {

using ::testing::HasSubstr;
using test_support::TempDir;

struct Content {
  uint64_t hash = 1469598103934665603ULL;  // FNV-1a 64 over every row, in id order
  uint64_t rows = 0;
  int64_t min_id = INT64_MAX, max_id = INT64_MIN;
  std::map<std::string, uint64_t> per_node;
  int64_t min_size = INT64_MAX, max_size = INT64_MIN;
  int64_t min_updated = INT64_MAX, max_updated = INT64_MIN;
};

void Mix(uint64_t& h, const void* p, size_t n) {
  const auto* b = static_cast<const unsigned char*>(p);
  for (size_t i = 0; i < n; ++i) {
    h ^= b[i];
    h *= 1099511628211ULL;
  }
}

Content Scan(const std::string& path) {
  Content c;
  Result<Database> db = Database::Open(path);
  EXPECT_TRUE(db.ok()) << db.status().ToString();
  if (!db.ok()) return c;
  Result<Statement> st =
      db->Prepare("SELECT id, node, size, updated_at FROM resources ORDER BY id");
  EXPECT_TRUE(st.ok());
  for (;;) {
    Result<bool> row = st->Step();
    EXPECT_TRUE(row.ok());
    if (!row.ok() || !*row) break;
    int64_t id = st->ColumnInt64(0), size = st->ColumnInt64(2), upd = st->ColumnInt64(3);
    std::string node(st->ColumnText(1));
    Mix(c.hash, &id, sizeof id);
    Mix(c.hash, node.data(), node.size() + 1);
    Mix(c.hash, &size, sizeof size);
    Mix(c.hash, &upd, sizeof upd);
    ++c.rows;
    c.min_id = std::min(c.min_id, id);
    c.max_id = std::max(c.max_id, id);
    ++c.per_node[node];
    c.min_size = std::min(c.min_size, size);
    c.max_size = std::max(c.max_size, size);
    c.min_updated = std::min(c.min_updated, upd);
    c.max_updated = std::max(c.max_updated, upd);
  }
  return c;
}

std::string JournalMode(const std::string& path) {
  Result<Database> db = Database::Open(path);
  EXPECT_TRUE(db.ok());
  Result<Statement> st = db->Prepare("PRAGMA journal_mode");
  EXPECT_TRUE(st.ok() && *st->Step());
  return std::string(st->ColumnText(0));
}

std::vector<std::string> Listing(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    names.push_back(e.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

BuildOptions Options(const std::string& path, uint64_t seed, uint64_t records = 5000) {
  BuildOptions o;
  o.path = path;
  o.records = records;
  o.nodes = 8;
  o.seed = seed;
  return o;
}

TEST(ResourceBuilderTest, ContentFollowsTheContract) {
  TempDir dir;
  std::string path = dir.File("r.db");
  BuildOptions options = Options(path, 1, 40'000);
  Result<BuildStats> stats = BuildResourceDb(options, nullptr);
  ASSERT_TRUE(stats.ok()) << stats.status().ToString();
  EXPECT_EQ(stats->records, 40'000u);
  EXPECT_EQ(stats->file_bytes, std::filesystem::file_size(path));

  Content c = Scan(path);
  EXPECT_EQ(c.rows, 40'000u);
  EXPECT_EQ(c.min_id, 1);
  EXPECT_EQ(c.max_id, 40'000);  // with rows == max - min + 1: ids 1..N, no holes
  ASSERT_EQ(c.per_node.size(), 8u);
  int n = 0;
  for (const auto& [node, count] : c.per_node) {
    char want[32];
    std::snprintf(want, sizeof want, "node-%04d", n++);
    EXPECT_EQ(node, want);
    // Uniform over 8 nodes: 5000 expected, a 4 % band is > 5 standard deviations.
    EXPECT_NEAR(static_cast<double>(count), 5000.0, 200.0) << node;
  }
  EXPECT_GE(c.min_size, 64 * 1024);
  EXPECT_LT(c.max_size, int64_t{4} << 30);
  EXPECT_GT(c.max_size, int64_t{3} << 30);  // the range is used, not a constant
  EXPECT_GE(c.min_updated, kResourceBaseUnixSeconds);
  EXPECT_LT(c.max_updated, kResourceBaseUnixSeconds + 5 * 365 * 24 * 3600);
  EXPECT_EQ(JournalMode(path), "wal");
  // Only the database is left: no temporary file, no -wal or -shm after the connection closed.
  EXPECT_EQ(Listing(dir.path()), std::vector<std::string>{"r.db"});
}

TEST(ResourceBuilderTest, SameSeedSameContentOtherSeedOtherContent) {
  TempDir dir;
  std::map<uint64_t, uint64_t> hash_by_seed;
  for (uint64_t seed : {1, 2, 3}) {
    std::string a = dir.File("a" + std::to_string(seed) + ".db");
    std::string b = dir.File("b" + std::to_string(seed) + ".db");
    ASSERT_TRUE(BuildResourceDb(Options(a, seed), nullptr).ok());
    ASSERT_TRUE(BuildResourceDb(Options(b, seed), nullptr).ok());
    Content ca = Scan(a), cb = Scan(b);
    EXPECT_EQ(ca.rows, 5000u);
    EXPECT_EQ(ca.hash, cb.hash) << "seed " << seed;
    hash_by_seed[seed] = ca.hash;
  }
  EXPECT_NE(hash_by_seed[1], hash_by_seed[2]);
  EXPECT_NE(hash_by_seed[2], hash_by_seed[3]);
  EXPECT_NE(hash_by_seed[1], hash_by_seed[3]);
  // A larger build starts with the same rows as a smaller one of the same seed.
  ASSERT_TRUE(BuildResourceDb(Options(dir.File("small.db"), 1, 10), nullptr).ok());
  ASSERT_TRUE(BuildResourceDb(Options(dir.File("big.db"), 1, 20), nullptr).ok());
  Result<Database> big = Database::Open(dir.File("big.db"));
  ASSERT_TRUE(big.ok());
  ASSERT_TRUE(big->Exec("DELETE FROM resources WHERE id > 10").ok());
  big = Status(Code::kInternal, "closed");
  EXPECT_EQ(Scan(dir.File("small.db")).hash, Scan(dir.File("big.db")).hash);
}

TEST(ResourceBuilderTest, RefusesToOverwriteUnlessAsked) {
  TempDir dir;
  std::string path = dir.File("r.db");
  ASSERT_TRUE(BuildResourceDb(Options(path, 1), nullptr).ok());
  uint64_t first = Scan(path).hash;

  Result<BuildStats> again = BuildResourceDb(Options(path, 2), nullptr);
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.status().code(), Code::kAlreadyExists);
  EXPECT_THAT(again.status().message(), HasSubstr(path));
  EXPECT_THAT(again.status().message(), HasSubstr("--force"));
  EXPECT_EQ(Scan(path).hash, first);

  // Any existing file counts, database or not.
  std::string other = dir.File("notes.txt");
  std::ofstream(other) << "keep me";
  EXPECT_EQ(BuildResourceDb(Options(other, 1), nullptr).status().code(), Code::kAlreadyExists);
  std::ifstream in(other);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, "keep me");

  // A stale -wal beside the old file must not be replayed into the new one.
  std::ofstream(path + "-wal") << std::string(8192, 'w');
  BuildOptions replace = Options(path, 2);
  replace.overwrite = true;
  ASSERT_TRUE(BuildResourceDb(replace, nullptr).ok());
  Content c = Scan(path);
  EXPECT_NE(c.hash, first);
  ASSERT_TRUE(BuildResourceDb(Options(dir.File("fresh.db"), 2), nullptr).ok());
  EXPECT_EQ(c.hash, Scan(dir.File("fresh.db")).hash);
}

TEST(ResourceBuilderTest, ProgressIsMonotonicFromZeroToTotal) {
  TempDir dir;
  std::vector<std::pair<uint64_t, uint64_t>> calls;
  BuildOptions options = Options(dir.File("p.db"), 1, 100'000);
  ASSERT_TRUE(BuildResourceDb(options, [&](uint64_t done, uint64_t total) {
                calls.emplace_back(done, total);
              }).ok());
  ASSERT_GE(calls.size(), 3u);
  EXPECT_EQ(calls.front().first, 0u);
  EXPECT_EQ(calls.back().first, 100'000u);
  for (size_t i = 0; i < calls.size(); ++i) {
    EXPECT_EQ(calls[i].second, 100'000u);
    if (i > 0) {
      EXPECT_GE(calls[i].first, calls[i - 1].first);
    }
  }
}

TEST(ResourceBuilderTest, BadOptionsAreRefusedWithoutLeavingFiles) {
  TempDir dir;
  BuildOptions no_nodes = Options(dir.File("n.db"), 1);
  no_nodes.nodes = 0;
  Result<BuildStats> a = BuildResourceDb(no_nodes, nullptr);
  EXPECT_EQ(a.status().code(), Code::kInvalidArgument);
  EXPECT_THAT(a.status().message(), HasSubstr("nodes"));

  BuildOptions no_path = Options("", 1);
  EXPECT_EQ(BuildResourceDb(no_path, nullptr).status().code(), Code::kInvalidArgument);

  Result<BuildStats> no_dir = BuildResourceDb(Options(dir.File("missing/x.db"), 1), nullptr);
  EXPECT_EQ(no_dir.status().code(), Code::kIo);
  EXPECT_THAT(no_dir.status().message(), HasSubstr(dir.File("missing/x.db")));
  EXPECT_TRUE(Listing(dir.path()).empty());
}

TEST(ResourceBuilderTest, ZeroRecordsGivesAnEmptyUsableTable) {
  TempDir dir;
  ASSERT_TRUE(BuildResourceDb(Options(dir.File("e.db"), 1, 0), nullptr).ok());
  Result<ResourceReader> reader = ResourceReader::Open(dir.File("e.db"));
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  std::vector<uint64_t> ids = {1};
  std::vector<LookupResult> out;
  ASSERT_TRUE(reader->Lookup(ids, out).ok());
  EXPECT_FALSE(out[0].found);
}

}  // namespace
}  // namespace vsc::store
