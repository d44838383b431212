// Resource lookups (DESIGN.md §10) on a 2,000,000-record database: the production path
// (ResourceReader) for 1, 5 and 10 ids per request, plus the alternatives it was chosen over,
// so the choice can be re-checked on other hardware.
//
// The database is built once into /tmp (vsc_store_bench_2m_seed1.db) when absent.
// items/s = ids looked up per second; requests/s = Lookup calls per second (one core).
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "common/random.h"
#include "store/database.h"
#include "store/resource_builder.h"
#include "store/resource_store.h"

namespace vsc::store {
namespace {

constexpr uint64_t kRecords = 2'000'000;
constexpr const char* kPath = "/tmp/vsc_store_bench_2m_seed1.db";

const std::string& BenchDb() {
  static const std::string path = [] {
    BuildOptions options;
    options.path = kPath;
    options.records = kRecords;
    Result<BuildStats> stats = BuildResourceDb(options, nullptr);
    if (!stats.ok() && stats.status().code() != Code::kAlreadyExists) {
      std::fprintf(stderr, "store_bench: %s\n", stats.status().ToString().c_str());
      std::exit(1);
    }
    return std::string(kPath);
  }();
  return path;
}

// Request-sized batches of uniformly random ids, 1 in 20 past the end (not found).
std::vector<uint64_t> RandomIds(size_t count) {
  Random rng(12345);
  std::vector<uint64_t> ids(count);
  for (uint64_t& id : ids) {
    id = rng.Uniform(20) == 0 ? kRecords + 1 + rng.Uniform(kRecords) : 1 + rng.Uniform(kRecords);
  }
  return ids;
}

void Check(const Status& st) {
  if (!st.ok()) {
    std::fprintf(stderr, "store_bench: %s\n", st.ToString().c_str());
    std::exit(1);
  }
}

void Report(benchmark::State& state, size_t per_request) {
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(per_request));
  state.counters["requests/s"] =
      benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}

constexpr size_t kIdPool = 1 << 20;

// The production path.
void BM_ResourceReaderLookup(benchmark::State& state) {
  const size_t n = static_cast<size_t>(state.range(0));
  Result<ResourceReader> reader = ResourceReader::Open(BenchDb());
  Check(reader.status());
  std::vector<uint64_t> ids = RandomIds(kIdPool);
  std::vector<LookupResult> out;
  size_t at = 0;
  for (auto _ : state) {
    if (at + n > ids.size()) at = 0;
    Check(reader->Lookup(std::span<const uint64_t>(ids.data() + at, n), out));
    benchmark::DoNotOptimize(out.data());
    at += n;
  }
  Report(state, n);
}
BENCHMARK(BM_ResourceReaderLookup)->Arg(1)->Arg(5)->Arg(10);

// Requests of 1..10 ids (uniform), the mix of DESIGN.md §10; range(0) requests share one
// snapshot (BeginBatch/EndBatch), 1 = each request on its own.
void BM_ResourceReaderMixed(benchmark::State& state) {
  const int64_t batch = state.range(0);
  Result<ResourceReader> reader = ResourceReader::Open(BenchDb());
  Check(reader.status());
  std::vector<uint64_t> ids = RandomIds(kIdPool);
  std::vector<size_t> sizes(4096);
  Random rng(777);
  for (size_t& n : sizes) n = 1 + rng.Uniform(kMaxLookupIds);
  std::vector<LookupResult> out;
  size_t at = 0, k = 0;
  int64_t id_count = 0;
  for (auto _ : state) {
    if (batch > 1) Check(reader->BeginBatch());
    for (int64_t r = 0; r < batch; ++r) {
      const size_t n = sizes[k++ % sizes.size()];
      if (at + n > ids.size()) at = 0;
      Check(reader->Lookup(std::span<const uint64_t>(ids.data() + at, n), out));
      benchmark::DoNotOptimize(out.data());
      at += n;
      id_count += static_cast<int64_t>(n);
    }
    if (batch > 1) Check(reader->EndBatch());
  }
  state.SetItemsProcessed(id_count);
  state.counters["requests/s"] = benchmark::Counter(static_cast<double>(state.iterations() * batch),
                                                    benchmark::Counter::kIsRate);
}
BENCHMARK(BM_ResourceReaderMixed)->ArgName("batch")->Arg(1)->Arg(32);

// Alternatives measured against it. Each opens its own read-only connection.
Database OpenRaw(int64_t mmap_bytes, int cache_kib) {
  OpenOptions o;
  o.read_only = true;
  o.synchronous.clear();
  o.mmap_bytes = mmap_bytes;
  o.cache_kib = cache_kib;
  Result<Database> db = Database::Open(BenchDb(), o);
  Check(db.status());
  return std::move(*db);
}

// One "WHERE id=?" statement stepped per id. range(1): 1 = mmap the file, 0 = page cache only;
// range(2): SQLite page cache in MiB; range(3): how the read snapshot is taken —
//   0: one implicit transaction per id (statement reset after each id),
//   1: BEGIN ... COMMIT around the request,
//   2: the first id's statement is left un-reset until the request ends, which keeps one
//      implicit read transaction open for the other ids without running BEGIN and COMMIT.
void BM_PointPerId(benchmark::State& state) {
  const size_t n = static_cast<size_t>(state.range(0));
  Database db =
      OpenRaw(state.range(1) != 0 ? int64_t{1} << 32 : 0, static_cast<int>(state.range(2) * 1024));
  const int64_t mode = state.range(3);
  Result<Statement> st = db.Prepare("SELECT node FROM resources WHERE id=?1", true);
  Result<Statement> first = db.Prepare("SELECT node FROM resources WHERE id=?1", true);
  Result<Statement> begin = db.Prepare("BEGIN", true);
  Result<Statement> commit = db.Prepare("COMMIT", true);
  Check(st.status());
  std::vector<uint64_t> ids = RandomIds(kIdPool);
  std::vector<std::string> nodes(n);
  size_t at = 0;
  for (auto _ : state) {
    if (at + n > ids.size()) at = 0;
    size_t i = 0;
    if (mode == 1) Check(begin->Run());
    if (mode == 2) {
      Check(first->BindInt64(1, static_cast<int64_t>(ids[at])));
      Result<bool> row = first->Step();
      Check(row.status());
      if (*row) nodes[0].assign(first->ColumnText(0));
      i = 1;
    }
    for (; i < n; ++i) {
      Check(st->BindInt64(1, static_cast<int64_t>(ids[at + i])));
      Result<bool> row = st->Step();
      Check(row.status());
      if (*row) nodes[i].assign(st->ColumnText(0));
      st->Reset();
    }
    if (mode == 1) Check(commit->Run());
    if (mode == 2) first->Reset();
    at += n;
  }
  Report(state, n);
}
BENCHMARK(BM_PointPerId)
    ->ArgNames({"ids", "mmap", "cache_mib", "snapshot"})
    ->Args({1, 1, 16, 0})
    ->Args({10, 1, 16, 0})
    ->Args({1, 0, 2, 0})
    ->Args({10, 0, 2, 0})
    ->Args({1, 0, 128, 0})
    ->Args({10, 0, 128, 0})
    ->Args({5, 1, 16, 1})
    ->Args({10, 1, 16, 1})
    ->Args({5, 1, 16, 2})
    ->Args({10, 1, 16, 2});

// One "WHERE id IN (?,...,?)" statement per request size; rows come back in id order and are
// matched to the request.
void BM_InList(benchmark::State& state) {
  const size_t n = static_cast<size_t>(state.range(0));
  Database db = OpenRaw(int64_t{1} << 32, 16 * 1024);
  std::string sql = "SELECT id, node FROM resources WHERE id IN (?1";
  for (size_t i = 2; i <= n; ++i) sql += ",?" + std::to_string(i);
  sql += ")";
  Result<Statement> st = db.Prepare(sql, true);
  Check(st.status());
  std::vector<uint64_t> ids = RandomIds(kIdPool);
  std::vector<std::string> nodes(n);
  size_t at = 0;
  for (auto _ : state) {
    if (at + n > ids.size()) at = 0;
    for (size_t i = 0; i < n; ++i) Check(st->BindInt64(static_cast<int>(i + 1), ids[at + i]));
    for (;;) {
      Result<bool> row = st->Step();
      Check(row.status());
      if (!*row) break;
      const uint64_t id = static_cast<uint64_t>(st->ColumnInt64(0));
      for (size_t i = 0; i < n; ++i) {
        if (ids[at + i] == id) nodes[i].assign(st->ColumnText(1));
      }
    }
    st->Reset();
    at += n;
  }
  Report(state, n);
}
BENCHMARK(BM_InList)->Arg(1)->Arg(5)->Arg(10);

}  // namespace
}  // namespace vsc::store

BENCHMARK_MAIN();
