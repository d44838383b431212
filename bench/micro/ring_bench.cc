// ns per ring operation on rings of 16, 1,024 and 10,000 members (DESIGN.md §8).
//
//   ring_bench --benchmark_filter='BM_(KeyId|Successor|NextHop|Lookup|FingerTable|Diff|Build|
//       EncodeTable|DecodeTable)'
//
// Successor is what a prefetching client pays per request after hashing the key (KeyId);
// NextHop is what a ring node pays to forward a key it does not own; Lookup walks the whole
// Chord path from a random start, building each hop's finger table as it goes (a simulation's
// cost, not a node's). FingerTable, Diff, Build and the codec run once per ring version.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <string>
#include <vector>

#include "common/random.h"
#include "ring/fingers.h"
#include "ring/handoff.h"
#include "ring/lookup.h"
#include "ring/ring.h"
#include "ring/table_codec.h"

namespace vsc::ring {
namespace {

std::vector<NodeSpec> Nodes(size_t n) {
  std::vector<NodeSpec> nodes;
  for (size_t i = 0; i < n; ++i) {
    nodes.push_back(
        NodeSpec{"rs-" + std::to_string(i),
                 Endpoint{"10.0." + std::to_string(i / 250) + "." + std::to_string(1 + i % 250),
                          static_cast<uint16_t>(7000 + i % 1000)}});
  }
  return nodes;
}

Ring MakeRing(size_t n) { return std::move(Ring::Build(1, Nodes(n))).value(); }

// 4096 random key ids, so lookups touch different parts of the member array.
std::vector<RingId> Keys() {
  Random rng(11);
  std::vector<RingId> keys(4096);
  for (RingId& k : keys) k = rng.Next();
  return keys;
}

void BM_KeyId(benchmark::State& state) {
  std::string key = "group-0000000000";
  uint64_t i = 0;
  for (auto _ : state) {
    key[6 + (i++ & 7)]++;
    benchmark::DoNotOptimize(KeyId(key));
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_Successor(benchmark::State& state) {
  const Ring ring = MakeRing(static_cast<size_t>(state.range(0)));
  const std::vector<RingId> keys = Keys();
  size_t i = 0;
  for (auto _ : state) benchmark::DoNotOptimize(ring.SuccessorIndex(keys[i++ & 4095]));
  state.SetItemsProcessed(state.iterations());
}

void BM_NextHop(benchmark::State& state) {
  const Ring ring = MakeRing(static_cast<size_t>(state.range(0)));
  const FingerTable fingers(ring, 0);
  const std::vector<RingId> keys = Keys();
  size_t i = 0;
  for (auto _ : state) benchmark::DoNotOptimize(NextHop(ring, fingers, keys[i++ & 4095]));
  state.SetItemsProcessed(state.iterations());
}

void BM_Lookup(benchmark::State& state) {
  const Ring ring = MakeRing(static_cast<size_t>(state.range(0)));
  const std::vector<RingId> keys = Keys();
  size_t i = 0, hops = 0;
  for (auto _ : state) {
    const LookupPath path = Lookup(ring, i % ring.size(), keys[i & 4095]);
    hops += path.hops();
    ++i;
  }
  state.counters["hops"] = benchmark::Counter(static_cast<double>(hops) / static_cast<double>(i));
  state.SetItemsProcessed(state.iterations());
}

void BM_FingerTable(benchmark::State& state) {
  const Ring ring = MakeRing(static_cast<size_t>(state.range(0)));
  size_t i = 0;
  for (auto _ : state) {
    FingerTable f(ring, i++ % ring.size());
    benchmark::DoNotOptimize(f);
  }
}

void BM_Build(benchmark::State& state) {
  const std::vector<NodeSpec> nodes = Nodes(static_cast<size_t>(state.range(0)));
  for (auto _ : state) benchmark::DoNotOptimize(Ring::Build(1, nodes));
}

void BM_Diff(benchmark::State& state) {
  std::vector<NodeSpec> nodes = Nodes(static_cast<size_t>(state.range(0)));
  const Ring before = std::move(Ring::Build(1, nodes)).value();
  nodes.push_back(NodeSpec{"joiner", Endpoint{"10.9.9.9", 9}});
  const Ring after = std::move(Ring::Build(2, nodes)).value();
  for (auto _ : state) benchmark::DoNotOptimize(Diff(before, after));
}

void BM_EncodeTable(benchmark::State& state) {
  const Ring ring = MakeRing(static_cast<size_t>(state.range(0)));
  for (auto _ : state) benchmark::DoNotOptimize(EncodeTable(ring));
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(EncodedTableSize(ring)));
}

void BM_DecodeTable(benchmark::State& state) {
  const std::vector<uint8_t> bytes = EncodeTable(MakeRing(static_cast<size_t>(state.range(0))));
  for (auto _ : state) benchmark::DoNotOptimize(DecodeTable(bytes));
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(bytes.size()));
}

BENCHMARK(BM_KeyId);
BENCHMARK(BM_Successor)->Arg(16)->Arg(1024)->Arg(10000);
BENCHMARK(BM_NextHop)->Arg(16)->Arg(1024)->Arg(10000);
BENCHMARK(BM_Lookup)->Arg(16)->Arg(1024)->Arg(10000);
BENCHMARK(BM_FingerTable)->Arg(16)->Arg(1024)->Arg(10000);
BENCHMARK(BM_Build)->Arg(16)->Arg(1024)->Arg(10000)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Diff)->Arg(16)->Arg(1024)->Arg(10000)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_EncodeTable)->Arg(1024)->Arg(10000)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_DecodeTable)->Arg(1024)->Arg(10000)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace vsc::ring

BENCHMARK_MAIN();
