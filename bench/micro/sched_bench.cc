// ns per Pick for every scheduler, with 4 and 64 backends, and for persistence in front of one.
//
//   sched_bench --benchmark_filter=Pick
//
// Backends carry uneven weights and connection counts so the least-connection scans do real
// comparisons; client addresses vary per pick so hashing schedulers touch different slots.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <string>
#include <vector>

#include "common/random.h"
#include "sched/persistence.h"
#include "sched/scheduler.h"

namespace vsc::sched {
namespace {

std::vector<Backend> MakeBackends(size_t n) {
  Random rng(7);
  std::vector<Backend> backends(n);
  for (size_t i = 0; i < n; ++i) {
    Backend& b = backends[i];
    b.key = 0x5eed0000 + i;
    b.weight = 1 + static_cast<uint32_t>(rng.Uniform(8));
    b.active = static_cast<uint32_t>(rng.Uniform(1000));
    b.inactive = static_cast<uint32_t>(rng.Uniform(5000));
    b.run_queue = rng.NextDouble() * 4;
    b.response_ms = 50 + rng.NextDouble() * 600;
  }
  return backends;
}

void BM_Pick(benchmark::State& state, std::string name) {
  auto backends = MakeBackends(static_cast<size_t>(state.range(0)));
  auto made = MakeScheduler(name);
  if (!made.ok()) {
    state.SkipWithError(made.status().ToString().c_str());
    return;
  }
  std::unique_ptr<Scheduler> s = std::move(made).value();
  s->Rebuild(backends);
  uint32_t ip = 0x0A000001;
  size_t sink = 0;
  for (auto _ : state) {
    auto p = s->Pick(backends, Flow{ip, 40000});
    ip += 0x01000193;  // a stride that changes the low byte too (sh hashes only that)
    sink += p.value_or(0);
    benchmark::DoNotOptimize(sink);
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_PickPersistent(benchmark::State& state) {
  auto backends = MakeBackends(static_cast<size_t>(state.range(0)));
  std::unique_ptr<Scheduler> s = std::move(MakeScheduler("wlc")).value();
  s->Rebuild(backends);
  PersistenceOptions options;
  options.max_entries = 4096;
  PersistenceTable table = std::move(PersistenceTable::Create(options)).value();
  TimePoint now(std::chrono::seconds(1000));
  uint32_t i = 0;
  for (auto _ : state) {
    // 8192 distinct clients cycling through a 4096-entry table: half hits, half evictions.
    auto p = PickPersistent(table, *s, backends, Flow{0x0A000000u + (i++ & 8191), 0}, now);
    benchmark::DoNotOptimize(p);
    now += std::chrono::microseconds(1);
  }
  state.SetItemsProcessed(state.iterations());
}

// Rebuild (BuildTable + Adopt) is what the control thread pays when a view changes the
// destinations or their weights; Maglev's is the expensive one.
void BM_Rebuild(benchmark::State& state, std::string name) {
  auto backends = MakeBackends(static_cast<size_t>(state.range(0)));
  std::unique_ptr<Scheduler> s = std::move(MakeScheduler(name)).value();
  for (auto _ : state) {
    s->Rebuild(backends);
    benchmark::ClobberMemory();
  }
}

void RegisterAll() {
  for (std::string_view name : SchedulerNames()) {
    benchmark::RegisterBenchmark(("BM_Pick/" + std::string(name)).c_str(), BM_Pick,
                                 std::string(name))
        ->Arg(4)
        ->Arg(64);
  }
  benchmark::RegisterBenchmark("BM_PickPersistent/wlc", BM_PickPersistent)->Arg(4)->Arg(64);
  for (std::string name : {"wrr", "sh", "mh"}) {
    benchmark::RegisterBenchmark(("BM_Rebuild/" + name).c_str(), BM_Rebuild, name)
        ->Arg(4)
        ->Arg(64)
        ->Unit(benchmark::kMicrosecond);
  }
}

}  // namespace
}  // namespace vsc::sched

int main(int argc, char** argv) {
  vsc::sched::RegisterAll();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
