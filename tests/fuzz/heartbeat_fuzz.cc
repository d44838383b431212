// Fuzzes heartbeat -> membership on the director: registrations, heartbeats (the protobuf the UDP
// loop opens from an envelope), session closes and time passing, on four senders rs0..rs3, as
// ControlServer feeds them to the ControlPlane; after each step the published view goes through
// every scheduler, since heartbeats carry the load figures (run queue, response time) that
// ll and dwlc compute with. Record ops (fuzz_records.h): sender = op & 3, action = (op >> 2) % 4:
//   0 a Register (bytes: proto::Register)   1 a Heartbeat (bytes: proto::Heartbeat)
//   2 the control session closes           3 time passes (bytes: ms) and Tick runs
// Invariants: every heartbeat is counted once (accepted, unknown or stale); an accepted
// heartbeat's counter is above the last one accepted in that incarnation since the server
// registered (replay protection);
// the view lists each registered server once, sorted; a scheduler picks only a server that can
// take new work.
#include <spdlog/spdlog.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "director/control_plane.h"
#include "fuzz_records.h"
#include "sched/scheduler.h"

namespace {

using vsc::director::ControlPlane;

using SchedulerSet = std::vector<std::unique_ptr<vsc::sched::Scheduler>>;

// One set of every scheduler per lookup service, as each worker holds one per service.
std::array<SchedulerSet, vsc::director::kServiceCount>& Schedulers() {
  static std::array<SchedulerSet, vsc::director::kServiceCount> all = [] {
    spdlog::set_level(spdlog::level::off);
    vsc::sched::SchedulerOptions o;
    o.mh_table_size = 251;  // a small prime: a Rebuild per step stays cheap
    std::array<SchedulerSet, vsc::director::kServiceCount> sets;
    for (SchedulerSet& v : sets) {
      for (std::string_view name : vsc::sched::SchedulerNames()) {
        auto s = vsc::sched::MakeScheduler(name, o);
        if (!s.ok()) std::abort();
        v.push_back(std::move(s).value());
      }
    }
    return sets;
  }();
  return all;
}

void CheckView(ControlPlane& plane, uint32_t flow_seed) {
  // As the workers do: tables are rebuilt when membership or weights changed, not for load.
  const bool rebuild = plane.StructureChanged();
  const auto view = plane.BuildView();
  // Every registered server offers the UDP lookup service; the TCP one only with its endpoint.
  const auto& udp = view->services[vsc::director::kUdpService];
  if (udp.size() != plane.membership().size()) std::abort();
  if (view->services[vsc::director::kTcpService].size() > udp.size()) std::abort();
  for (int svc = 0; svc < vsc::director::kServiceCount; ++svc) {
    const auto& servers = view->services[svc];
    std::vector<vsc::sched::Backend> backends;
    for (size_t i = 0; i < servers.size(); ++i) {
      if (i > 0 && !(servers[i - 1].id < servers[i].id)) std::abort();
      backends.push_back(servers[i].backend);
    }
    for (auto& s : Schedulers()[svc]) {
      if (rebuild) s->Rebuild(backends);
      for (uint32_t k = 0; k < 4; ++k) {
        vsc::sched::Flow flow{flow_seed * 2654435761u + k, static_cast<uint16_t>(k)};
        if (auto pick = s->Pick(backends, flow)) {
          if (*pick >= backends.size() || !vsc::sched::CanTakeNewWork(backends[*pick])) {
            std::abort();
          }
        }
      }
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  (void)Schedulers();
  ControlPlane plane(vsc::membership::Config{std::chrono::milliseconds(100), 2, 5}, {});
  vsc::TimePoint now{std::chrono::seconds(1000)};
  std::map<std::string, std::pair<uint64_t, uint64_t>> last_accepted;  // id -> incarnation, counter
  uint64_t heartbeats = 0;
  std::map<std::string, uint64_t> session;  // id -> its current control session's number
  uint64_t next_session = 0;
  vsc::fuzz::RecordReader in(data, size);
  vsc::fuzz::Record rec;
  for (int steps = 0; steps < 64 && in.Next(rec); ++steps) {
    const std::string sender = "rs" + std::to_string(rec.op & 3);
    switch ((rec.op >> 2) % 4) {
      case 0: {
        vsc::proto::Register reg;
        if (vsc::fuzz::ParseMessage(rec.bytes, reg) && reg.id() == sender) {
          if (!session.count(sender)) session[sender] = ++next_session;
          plane.OnRegister(reg, session[sender], 7101, now);
          // A re-registration after DOWN must prove liveness anew: its counters start over
          // (membership.cc); replays across sessions are the envelope's ReplayGuard's job.
          last_accepted.erase(sender);
        }
        break;
      }
      case 1: {
        vsc::proto::Heartbeat hb;
        if (!vsc::fuzz::ParseMessage(rec.bytes, hb) || hb.id() != sender) break;
        const uint64_t accepted = plane.membership().counters().heartbeats_accepted;
        plane.OnHeartbeat(hb, now);
        heartbeats++;
        if (plane.membership().counters().heartbeats_accepted != accepted) {
          auto it = last_accepted.find(sender);
          if (it != last_accepted.end() && it->second.first == hb.incarnation() &&
              hb.counter() <= it->second.second) {
            std::abort();  // a replayed or older heartbeat was accepted
          }
          last_accepted[sender] = {hb.incarnation(), hb.counter()};
        }
        break;
      }
      case 2: {
        plane.OnSessionClosed(sender, session.count(sender) ? session[sender] : 0, now);
        session[sender] = ++next_session;  // it reconnects on a new session
        break;
      }
      case 3:
        now += std::chrono::milliseconds(vsc::fuzz::Small(rec.bytes));
        (void)plane.Tick(now);
        break;
    }
    const auto& c = plane.membership().counters();
    if (c.heartbeats_accepted + c.heartbeats_unknown + c.heartbeats_stale != heartbeats) {
      std::abort();
    }
    CheckView(plane, static_cast<uint32_t>(steps));
  }
  return 0;
}
