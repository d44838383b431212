#include "membership/membership.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <utility>

namespace vsc::membership {

Status ValidateConfig(const Config& config) {
  if (config.heartbeat_interval <= Duration::zero()) {
    return InvalidArgument("membership: heartbeat_interval must be positive");
  }
  if (config.silent_after < 1) {
    return InvalidArgument(
        fmt::format("membership: silent_after is {}; it must be at least 1 missed heartbeat",
                    config.silent_after));
  }
  if (config.down_after < config.silent_after) {
    return InvalidArgument(fmt::format(
        "membership: down_after ({}) is below silent_after ({}); a server must turn SILENT "
        "before or when it turns DOWN",
        config.down_after, config.silent_after));
  }
  return Status::Ok();
}

Status ValidateRegistration(const Registration& reg) {
  if (reg.id.empty()) return InvalidArgument("registration refused: empty server id");
  if (reg.weight > kMaxWeight) {
    return InvalidArgument(fmt::format("registration of {} refused: weight {} above the maximum {}",
                                       reg.id, reg.weight, kMaxWeight));
  }
  for (const Endpoint& ep : reg.endpoints) {
    if (ep.service.empty() || ep.host.empty() || ep.port == 0) {
      return InvalidArgument(fmt::format(
          "registration of {} refused: endpoint '{}' at '{}:{}' needs a service name, a host "
          "and a non-zero port",
          reg.id, ep.service, ep.host, ep.port));
    }
  }
  return Status::Ok();
}

uint64_t Counters::TotalTransitions() const {
  uint64_t total = 0;
  for (const auto& row : transitions) {
    for (uint64_t n : row) total += n;
  }
  return total;
}

Membership::Membership(Config config) : config_(config) {
  Status s = ValidateConfig(config_);
  if (!s.ok()) {
    // stderr, not the logger: the process is about to die and the logger may buffer or be unset.
    fmt::print(stderr, "fatal: {}\n", s.ToString());
    std::abort();
  }
}

void Membership::Move(Entry& e, State to, std::string reason, TimePoint now,
                      std::vector<Transition>& out) {
  State from = e.rec.state;
  if (from == to) return;
  e.rec.state = to;
  counters_.transitions[static_cast<size_t>(from)][static_cast<size_t>(to)]++;
  ++version_;
  out.push_back(Transition{e.rec.reg.id, from, to, std::move(reason), now});
  RefreshWeight(e);
}

void Membership::RefreshWeight(Entry& e) {
  uint32_t w = e.rec.state == State::kDraining
                   ? 0
                   : std::min(e.operator_weight.value_or(e.rec.reg.weight), kMaxWeight);
  if (w != e.rec.weight) {
    e.rec.weight = w;
    ++version_;
  }
}

Membership::Entry* Membership::FindEntry(std::string_view id) {
  auto it = servers_.find(id);
  return it == servers_.end() ? nullptr : &it->second;
}

const ServerRecord* Membership::Find(std::string_view id) const {
  auto it = servers_.find(id);
  return it == servers_.end() ? nullptr : &it->second.rec;
}

std::vector<ServerRecord> Membership::Snapshot() const {
  std::vector<ServerRecord> out;
  out.reserve(servers_.size());
  for (const auto& [id, e] : servers_) out.push_back(e.rec);
  return out;
}

std::vector<Transition> Membership::Register(const Registration& reg, TimePoint now) {
  std::vector<Transition> out;
  Entry* e = FindEntry(reg.id);
  if (e == nullptr) {
    Entry fresh;
    fresh.rec.reg = reg;
    fresh.rec.state = State::kRemoved;  // absent; Move records REMOVED -> JOINING
    fresh.rec.weight = 0;
    fresh.rec.last_heartbeat = now;
    fresh.rec.applied_seq = reg.applied_seq;
    fresh.catch_up_pending = reg.needs_catch_up;
    e = &servers_.emplace(reg.id, std::move(fresh)).first->second;
    counters_.registrations++;
    Move(*e, State::kJoining, fmt::format("registered incarnation {}", reg.incarnation), now, out);
    return out;
  }

  ServerRecord& rec = e->rec;
  // Once DOWN, any other incarnation is a new process, even a numerically older one: the
  // incarnation is the wall clock at start, which may have stepped back across a restart. The
  // shell proved the registration fresh (session challenge) before it got here.
  if (reg.incarnation < rec.reg.incarnation && rec.state != State::kDown) {
    counters_.registrations_stale++;
    return out;
  }
  counters_.registrations++;
  const bool new_incarnation = reg.incarnation != rec.reg.incarnation;
  const bool data_changed = !(reg == rec.reg);
  rec.reg = reg;
  rec.applied_seq = reg.applied_seq;
  RefreshWeight(*e);

  if (rec.state == State::kDown || (new_incarnation && rec.state != State::kDraining)) {
    // A restarted (or reconnected, after DOWN) process must prove liveness again.
    rec.last_heartbeat = now;
    e->catch_up_pending = reg.needs_catch_up;
    e->has_counter = false;
    e->last_counter = 0;
    if (rec.state == State::kJoining) {
      if (data_changed) ++version_;
    } else {
      Move(*e, State::kJoining, fmt::format("re-registered incarnation {}", reg.incarnation), now,
           out);
    }
    return out;
  }
  if (new_incarnation) {  // DRAINING: the drain stands; track the new process's heartbeats
    rec.last_heartbeat = now;
    e->has_counter = false;
    e->last_counter = 0;
  }
  if (data_changed) ++version_;
  return out;
}

std::vector<Transition> Membership::OnHeartbeat(const Heartbeat& hb, TimePoint now) {
  std::vector<Transition> out;
  Entry* e = FindEntry(hb.id);
  if (e == nullptr || hb.incarnation > e->rec.reg.incarnation) {
    counters_.heartbeats_unknown++;
    return out;
  }
  ServerRecord& rec = e->rec;
  if (hb.incarnation < rec.reg.incarnation || rec.state == State::kDown ||
      (e->has_counter && hb.counter <= e->last_counter)) {
    counters_.heartbeats_stale++;
    return out;
  }
  counters_.heartbeats_accepted++;
  e->has_counter = true;
  e->last_counter = hb.counter;
  rec.load = hb.load;
  rec.last_heartbeat = now;
  rec.heartbeats++;
  rec.applied_seq = hb.applied_seq;
  rec.digest = hb.digest;

  if (hb.flag_down) {
    Move(*e, State::kDown, "server reports DOWN", now, out);
    return out;
  }
  const State alive = hb.flag_full ? State::kBusy : State::kActive;
  switch (rec.state) {
    case State::kJoining:
      if (e->catch_up_pending) {
        Move(*e, State::kCatchingUp, "first heartbeat; catching up", now, out);
      } else {
        Move(*e, alive, hb.flag_full ? "first heartbeat; server reports FULL" : "first heartbeat",
             now, out);
      }
      break;
    case State::kActive:
    case State::kBusy:
      Move(*e, alive, hb.flag_full ? "server reports FULL" : "server no longer FULL", now, out);
      break;
    case State::kSilent:
      Move(*e, alive,
           hb.flag_full ? "heartbeats resumed; server reports FULL" : "heartbeats resumed", now,
           out);
      break;
    case State::kCatchingUp:  // leaves only through CatchUpDone
    case State::kDraining:    // leaves only through Remove or death
    case State::kDown:
    case State::kRemoved:
      break;
  }
  return out;
}

std::vector<Transition> Membership::OnSessionClosed(std::string_view id, TimePoint now) {
  std::vector<Transition> out;
  Entry* e = FindEntry(id);
  if (e != nullptr && IsLive(e->rec.state)) {
    Move(*e, State::kDown, "control session closed", now, out);
  }
  return out;
}

std::vector<Transition> Membership::OnSessionClosed(std::string_view id, uint64_t incarnation,
                                                    TimePoint now) {
  const ServerRecord* rec = Find(id);
  if (rec == nullptr || incarnation != rec->reg.incarnation) return {};
  return OnSessionClosed(id, now);
}

std::vector<Transition> Membership::Tick(TimePoint now) {
  std::vector<Transition> out;
  for (auto& [id, e] : servers_) {
    State s = e.rec.state;
    if (!IsLive(s)) continue;
    const Duration since = now - e.rec.last_heartbeat;
    if (since < Duration::zero()) continue;  // a heartbeat stamped after `now`: nothing missed
    const int64_t missed = since / config_.heartbeat_interval;
    auto reason = [&] {
      return fmt::format("{} heartbeats missed (last {} ms ago)", missed,
                         static_cast<int64_t>(ToMillis(since)));
    };
    if (missed >= config_.down_after) {
      Move(e, State::kDown, reason(), now, out);
    } else if (missed >= config_.silent_after && (s == State::kActive || s == State::kBusy)) {
      Move(e, State::kSilent, reason(), now, out);
    }
  }
  return out;
}

Result<std::vector<Transition>> Membership::Drain(std::string_view id, TimePoint now) {
  Entry* e = FindEntry(id);
  if (e == nullptr) {
    return NotFound(fmt::format("drain: no server '{}'; list servers to see the ids", id));
  }
  if (e->rec.state == State::kDown) {
    return FailedPrecondition(fmt::format(
        "drain: server '{}' is DOWN and has no flows to finish; remove it instead", id));
  }
  std::vector<Transition> out;
  Move(*e, State::kDraining, "operator drain", now, out);
  return out;
}

Result<std::vector<Transition>> Membership::Remove(std::string_view id, TimePoint now) {
  auto it = servers_.find(id);
  if (it == servers_.end()) {
    return NotFound(fmt::format("remove: no server '{}'; list servers to see the ids", id));
  }
  Entry& e = it->second;
  if (e.rec.state != State::kDraining && e.rec.state != State::kDown) {
    return FailedPrecondition(fmt::format(
        "remove: server '{}' is {}; drain it first so its flows can finish, then remove it", id,
        StateName(e.rec.state)));
  }
  std::vector<Transition> out;
  Move(e, State::kRemoved, "operator remove", now, out);
  servers_.erase(it);
  return out;
}

Result<std::vector<Transition>> Membership::SetWeight(std::string_view id, uint32_t weight,
                                                      TimePoint now) {
  if (weight > kMaxWeight) {
    return InvalidArgument(
        fmt::format("weight {} for '{}' is above the maximum {}", weight, id, kMaxWeight));
  }
  Entry* e = FindEntry(id);
  if (e == nullptr) {
    return NotFound(fmt::format("set weight: no server '{}'; list servers to see the ids", id));
  }
  std::vector<Transition> out;
  if (weight > 0 && e->rec.state == State::kDraining) {
    if (e->catch_up_pending) {
      return FailedPrecondition(fmt::format(
          "set weight: '{}' was drained while catching up and its data may be behind; remove "
          "it (vsc adm remove {}) and restart its agent so it catches up first",
          id, id));
    }
    e->operator_weight = weight;  // its heartbeats are judged as before: Tick makes it SILENT
    Move(*e, State::kActive, fmt::format("drain ended: operator weight {}", weight), now, out);
    return out;
  }
  e->operator_weight = weight;
  RefreshWeight(*e);
  return out;
}

Result<std::vector<Transition>> Membership::BeginCatchUp(std::string_view id, std::string reason,
                                                         TimePoint now) {
  std::vector<Transition> out;
  Entry* e = FindEntry(id);
  if (e == nullptr) return NotFound("no real server '" + std::string(id) + "'");
  switch (e->rec.state) {
    case State::kActive:
    case State::kBusy:
    case State::kSilent:
      e->catch_up_pending = true;
      Move(*e, State::kCatchingUp, std::move(reason), now, out);
      return out;
    case State::kJoining:
      e->catch_up_pending = true;
      return out;
    case State::kCatchingUp:
      return out;
    case State::kDown:
    case State::kDraining:
    case State::kRemoved:
      break;
  }
  return FailedPrecondition("real server '" + std::string(id) + "' is " +
                            std::string(StateName(e->rec.state)) + ": it takes no work anyway");
}

std::vector<Transition> Membership::CatchUpDone(std::string_view id, TimePoint now) {
  std::vector<Transition> out;
  Entry* e = FindEntry(id);
  if (e == nullptr) return out;
  e->catch_up_pending = false;
  if (e->rec.state == State::kCatchingUp) {
    Move(*e, State::kActive, fmt::format("caught up (applied seq {})", e->rec.applied_seq), now,
         out);
  }
  return out;
}

}  // namespace vsc::membership
