// State sync (issue 11): what a director pays to pass persistent clients to its peers.
//
//   sync_bench
//
// BM_PackSync: encoding 1,000 new templates into SyncBatch messages (StateSync's work per 1,000
// new persistent clients, before the envelope); counters: bytes and datagrams on the wire per
// 1,000 clients, the envelope included (its fixed 49 bytes and a 40-byte sender per datagram),
// i.e. the bytes/s that 1,000 new persistent clients/s cost per peer.
// BM_SharedPick vs BM_PlainPick: one persistent pick through the table every worker shares
// (mutex, note decision) against sched::PickPersistent on a worker's own table, single-threaded.
#include <benchmark/benchmark.h>

#include <chrono>
#include <vector>

#include "director/shared_persistence.h"
#include "director/sync_codec.h"
#include "proto/envelope.h"
#include "sched/scheduler.h"

namespace vsc::director {
namespace {

constexpr size_t kClients = 1000;
constexpr size_t kSenderBytes = 40;  // "sync/10.0.0.11:7102/1764000000000"-like

std::vector<SyncRecord> NewClients() {
  std::vector<SyncRecord> out(kClients);
  for (size_t i = 0; i < kClients; ++i) {
    SyncRecord& r = out[i];
    r.kind = SyncKind::kTemplate;
    r.service = {vservice::Proto::kTcp, vservice::IpAddress::V4(0x0a000064), 443};
    r.client = {vservice::IpAddress::V4(0xc0a80000u + static_cast<uint32_t>(i * 7)), 0};
    r.dest = {vservice::IpAddress::V4(0x0a000010u + static_cast<uint32_t>(i % 4)), 8443};
    r.expires_in = std::chrono::milliseconds(300000);
  }
  return out;
}

void BM_PackSync(benchmark::State& state) {
  const std::vector<SyncRecord> records = NewClients();
  size_t bytes = 0, datagrams = 0;
  for (auto _ : state) {
    std::vector<proto::Message> packed = PackSync(records);
    bytes = 0;
    for (const proto::Message& m : packed) {
      bytes += m.ByteSizeLong() + proto::kEnvelopeFixedBytes + kSenderBytes;
    }
    datagrams = packed.size();
    benchmark::DoNotOptimize(packed);
  }
  state.SetItemsProcessed(state.iterations() * kClients);
  state.counters["wire_bytes_per_1000"] = static_cast<double>(bytes);
  state.counters["datagrams_per_1000"] = static_cast<double>(datagrams);
  state.counters["bytes_per_client"] = static_cast<double>(bytes) / kClients;
}

std::vector<sched::Backend> Backends() {
  std::vector<sched::Backend> b(8);
  for (size_t i = 0; i < b.size(); ++i) {
    b[i].key = 0x5eed0000 + i;
    b[i].weight = 1;
  }
  return b;
}

sched::PersistenceOptions Options() {
  sched::PersistenceOptions o;
  o.max_entries = 4096;
  return o;
}

void BM_PlainPick(benchmark::State& state) {
  const auto backends = Backends();
  auto s = std::move(sched::MakeScheduler("wlc")).value();
  s->Rebuild(backends);
  auto table = std::move(sched::PersistenceTable::Create(Options())).value();
  TimePoint now(std::chrono::seconds(1000));
  uint32_t i = 0;
  for (auto _ : state) {
    auto p = sched::PickPersistent(table, *s, backends, {0x0A000000u + (i++ & 8191), 0}, now);
    benchmark::DoNotOptimize(p);
    now += std::chrono::microseconds(1);
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_SharedPick(benchmark::State& state) {
  const auto backends = Backends();
  auto s = std::move(sched::MakeScheduler("wlc")).value();
  s->Rebuild(backends);
  SharedPersistence table(Options(), vservice::Family::kV4);
  TimePoint now(std::chrono::seconds(1000));
  uint32_t i = 0;
  for (auto _ : state) {
    const uint32_t client = 0x0A000000u + (i++ & 8191);
    auto p = table.Pick(*s, backends, {client, 0}, vservice::IpAddress::V4(client), now);
    benchmark::DoNotOptimize(p);
    now += std::chrono::microseconds(1);
  }
  state.SetItemsProcessed(state.iterations());
}

BENCHMARK(BM_PackSync)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_PlainPick);
BENCHMARK(BM_SharedPick);

}  // namespace
}  // namespace vsc::director

BENCHMARK_MAIN();
