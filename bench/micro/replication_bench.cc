// Replication core figures: entries applied per second by the Applier over a SqliteExecutor
// (synchronous=NORMAL, WAL) in batches of 1, 64 and 1024 inserts into a resources-like table;
// plus the per-write costs on the director (mirror check, digest step).
#include <benchmark/benchmark.h>
#include <stdlib.h>

#include <filesystem>
#include <string>
#include <vector>

#include "replication/applier.h"
#include "replication/digest.h"
#include "replication/mirror.h"
#include "replication/replica_store.h"

namespace vsc::replication {
namespace {

constexpr const char* kSchema =
    "CREATE TABLE resources(id INTEGER PRIMARY KEY, node TEXT NOT NULL, size INTEGER, "
    "updated_at INTEGER)";

Entry InsertEntry(uint64_t seq) {
  Entry e;
  e.epoch = 1;
  e.seq = seq;
  e.ts_micros = 1'700'000'000'000'000 + static_cast<int64_t>(seq);
  e.statements = {
      {"INSERT INTO resources(id, node, size, updated_at) "
       "VALUES(?1, ?2, ?3, unixepoch('now'))",
       {Value::Int(static_cast<int64_t>(seq)), Value::Text("cg-" + std::to_string(seq % 64)),
        Value::Int(static_cast<int64_t>(seq * 4096))}}};
  return e;
}

void BM_ApplyBatch(benchmark::State& state) {
  const auto batch = static_cast<uint64_t>(state.range(0));
  std::string dir = (std::filesystem::temp_directory_path() / "vsc_repl_bench_XXXXXX").string();
  if (::mkdtemp(dir.data()) == nullptr) {
    state.SkipWithError("mkdtemp failed");
    return;
  }
  {
    ReplicaOptions options;
    options.synchronous = "NORMAL";
    auto ex = OpenSqliteExecutor(dir + "/replica.db", options);
    if (!ex.ok()) {
      state.SkipWithError(ex.status().ToString().c_str());
      return;
    }
    auto applier = Applier::Create(std::move(*ex));
    if (!applier.ok()) {
      state.SkipWithError(applier.status().ToString().c_str());
      return;
    }
    Entry schema;
    schema.epoch = 1;
    schema.seq = 1;
    schema.statements = {{kSchema, {}}};
    if (!(*applier)->Apply(std::span<const Entry>(&schema, 1)).ok()) {
      state.SkipWithError("schema");
      return;
    }
    uint64_t seq = 2;
    std::vector<Entry> entries;
    for (auto _ : state) {
      state.PauseTiming();
      entries.clear();
      for (uint64_t i = 0; i < batch; ++i) entries.push_back(InsertEntry(seq++));
      state.ResumeTiming();
      auto res = (*applier)->Apply(entries);
      if (!res.ok() || res->size() != batch || (*res)[0].code != 0) {
        state.SkipWithError("apply failed");
        break;
      }
    }
    state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(batch));
    state.counters["entries/s"] = benchmark::Counter(
        static_cast<double>(state.iterations() * batch), benchmark::Counter::kIsRate);
  }
  std::filesystem::remove_all(dir);
}
BENCHMARK(BM_ApplyBatch)->Arg(1)->Arg(64)->Arg(1024)->Unit(benchmark::kMicrosecond)->UseRealTime();

void BM_MirrorCheck(benchmark::State& state) {
  auto mirror = SchemaMirror::Create();
  if (!mirror.ok() || !(*mirror)->LoadSchema({kSchema}).ok()) {
    state.SkipWithError("mirror");
    return;
  }
  const Statement st = InsertEntry(1).statements[0];
  for (auto _ : state) {
    auto kind = (*mirror)->Check(st);
    benchmark::DoNotOptimize(kind);
  }
}
BENCHMARK(BM_MirrorCheck);

void BM_NextDigest(benchmark::State& state) {
  const Entry e = InsertEntry(1);
  EntryResult r;
  r.seq = 1;
  r.rows_changed = 1;
  Digest d = ZeroDigest();
  for (auto _ : state) {
    d = NextDigest(d, e, r);
    benchmark::DoNotOptimize(d);
  }
}
BENCHMARK(BM_NextDigest);

}  // namespace
}  // namespace vsc::replication
BENCHMARK_MAIN();
