#include "director/control_plane.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <chrono>

#include "sched/hash.h"
#include "vservice/ip_address.h"

namespace vsc::director {
namespace {

// The registration endpoint each lookup service forwards to, indexed like ClusterView::services.
constexpr std::string_view kEndpointNames[kServiceCount] = {"lookup-udp", "lookup-tcp"};

// A lookup endpoint's numeric address, IPv4 or IPv6.
std::optional<vservice::AddrPort> LookupEndpoint(const membership::Endpoint& ep) {
  auto addr = vservice::IpAddress::Parse(ep.host);
  if (!addr.ok()) return std::nullopt;
  return vservice::AddrPort{*addr, ep.port};
}

const membership::Endpoint* FindEndpoint(const membership::Registration& reg,
                                         std::string_view service) {
  for (const auto& e : reg.endpoints) {
    if (e.service == service) return &e;
  }
  return nullptr;
}

}  // namespace

// A fronted local service (an endpoint with a protocol) names tcp or udp and a numeric address
// the director can connect to; its destinations are matched by that address.
Status CheckFrontedEndpoints(const membership::Registration& r) {
  for (const membership::Endpoint& ep : r.endpoints) {
    if (ep.proto.empty()) continue;
    if (ep.proto != "tcp" && ep.proto != "udp") {
      return InvalidArgument(fmt::format("fronted service '{}': protocol '{}' is not tcp or udp",
                                         ep.service, ep.proto));
    }
    auto addr = vservice::IpAddress::Parse(ep.host);
    if (!addr.ok() || addr->is_unspecified()) {
      return InvalidArgument(fmt::format(
          "fronted service '{}': '{}' is not a numeric address the director can connect to",
          ep.service, ep.host));
    }
  }
  return Status::Ok();
}

membership::Registration ToRegistration(const proto::Register& reg) {
  membership::Registration r;
  r.id = reg.id();
  r.incarnation = reg.incarnation();
  r.weight = reg.weight();
  for (const auto& e : reg.endpoints()) {
    r.endpoints.push_back({e.service(), e.host(), static_cast<uint16_t>(e.port()), e.proto()});
  }
  for (const auto& c : reg.capabilities()) r.capabilities.push_back(c);
  r.applied_seq = reg.applied_seq();
  return r;
}

membership::Heartbeat ToHeartbeat(const proto::Heartbeat& hb) {
  membership::Heartbeat h;
  h.id = hb.id();
  h.incarnation = hb.incarnation();
  h.counter = hb.counter();
  h.load.run_queue = hb.load().run_queue();
  h.load.cpu_pct = hb.load().cpu_pct();
  h.load.in_flight = hb.load().in_flight();
  h.load.queue_fill = hb.load().queue_fill();
  h.load.response_ms = hb.load().response_ms();
  h.flag_down = (hb.flags() & proto::Heartbeat::FLAG_DOWN) != 0;
  h.flag_full = (hb.flags() & proto::Heartbeat::FLAG_FULL) != 0;
  h.applied_seq = hb.applied_seq();
  h.digest = hb.digest();
  return h;
}

ControlPlane::ControlPlane(membership::Config config, ControlSettings settings)
    : membership_(config), settings_(std::move(settings)) {}

void ControlPlane::Log(const std::vector<membership::Transition>& transitions) {
  for (const auto& t : transitions) {
    spdlog::info("{} {} -> {} ({})", t.id, membership::StateName(t.from),
                 membership::StateName(t.to), t.reason);
  }
}

std::optional<std::pair<proto::RegisterAck::Refusal, std::string>> ControlPlane::IdentityConflict(
    const membership::Registration& reg, uint64_t session) const {
  if (auto it = removed_.find(reg.id); it != removed_.end() && it->second == reg.incarnation) {
    return std::pair{proto::RegisterAck::REFUSAL_REMOVED,
                     fmt::format("server '{}' (incarnation {}) was removed by the operator; start "
                                 "the process again to rejoin",
                                 reg.id, reg.incarnation)};
  }
  auto holder = holders_.find(reg.id);
  if (holder == holders_.end() || holder->second == session) return std::nullopt;
  const membership::ServerRecord* rec = membership_.Find(reg.id);
  if (rec == nullptr || rec->reg.incarnation == reg.incarnation) return std::nullopt;
  return std::pair{
      proto::RegisterAck::REFUSAL_DUPLICATE_ID,
      fmt::format("server id '{}' is in use by another live server (incarnation {}, {}, whose "
                  "control session is open); give this server its own id, or stop the other one "
                  "first",
                  reg.id, rec->reg.incarnation, membership::StateName(rec->state))};
}

proto::RegisterAck ControlPlane::Refuse(const proto::Register& reg,
                                        proto::RegisterAck::Refusal kind, const std::string& why) {
  proto::RegisterAck ack;
  ack.set_agent_nonce(reg.agent_nonce());
  ack.set_accepted(false);
  ack.set_refusal(kind);
  ack.set_reason(why);
  refusals_[kind]++;
  return ack;
}

proto::RegisterAck ControlPlane::OnRegister(const proto::Register& reg, uint64_t session,
                                            uint16_t heartbeat_port, TimePoint now,
                                            bool needs_catch_up) {
  proto::RegisterAck ack;
  ack.set_agent_nonce(reg.agent_nonce());
  membership::Registration r = ToRegistration(reg);
  r.needs_catch_up = needs_catch_up;
  auto refuse = [&](proto::RegisterAck::Refusal kind, const std::string& why) {
    spdlog::warn("registration of '{}' (incarnation {}) refused: {}", r.id, r.incarnation, why);
    return Refuse(reg, kind, why);
  };
  const auto invalid = proto::RegisterAck::REFUSAL_INVALID;
  if (Status s = membership::ValidateRegistration(r); !s.ok()) return refuse(invalid, s.message());
  if (Status s = CheckFrontedEndpoints(r); !s.ok()) return refuse(invalid, s.message());
  const auto* udp = FindEndpoint(r, "lookup-udp");
  if (udp == nullptr || !LookupEndpoint(*udp)) {
    return refuse(invalid,
                  "registration needs a 'lookup-udp' endpoint with a numeric IPv4 or IPv6 address");
  }
  if (const auto* tcp = FindEndpoint(r, "lookup-tcp"); tcp != nullptr && !LookupEndpoint(*tcp)) {
    return refuse(invalid, "the 'lookup-tcp' endpoint needs a numeric IPv4 or IPv6 address");
  }
  if (auto conflict = IdentityConflict(r, session)) {
    return refuse(conflict->first, conflict->second);
  }
  if (!slots_.contains(r.id)) {
    if (next_slot_ >= settings_.max_servers) {
      return refuse(proto::RegisterAck::REFUSAL_FULL, "the director already tracks max_servers=" +
                                                          std::to_string(settings_.max_servers) +
                                                          " servers; raise max_servers");
    }
    slots_[r.id] = next_slot_++;
  }
  removed_.erase(r.id);  // a new incarnation of a removed server
  holders_[r.id] = session;
  Log(membership_.Register(r, now));
  ack.set_accepted(true);
  ack.set_heartbeat_port(heartbeat_port);
  const auto& c = membership_.config();
  ack.set_heartbeat_interval_ms(static_cast<uint32_t>(
      std::chrono::duration_cast<std::chrono::milliseconds>(c.heartbeat_interval).count()));
  ack.set_silent_after(c.silent_after);
  ack.set_down_after(c.down_after);
  return ack;
}

void ControlPlane::OnHeartbeat(const proto::Heartbeat& hb, TimePoint now) {
  membership::Heartbeat h = ToHeartbeat(hb);
  const membership::ServerRecord* before = membership_.Find(h.id);
  membership::Load old_load;
  if (before != nullptr) old_load = before->load;
  Log(membership_.OnHeartbeat(h, now));
  const membership::ServerRecord* after = membership_.Find(h.id);
  if (after != nullptr && !(after->load == old_load)) load_changed_ = true;
}

void ControlPlane::CatchUpDone(const std::string& id, TimePoint now) {
  Log(membership_.CatchUpDone(id, now));
}

void ControlPlane::OnSessionClosed(const std::string& id, uint64_t session, TimePoint now) {
  auto it = holders_.find(id);
  if (it == holders_.end() || it->second != session) return;
  holders_.erase(it);
  Log(membership_.OnSessionClosed(id, now));
}

std::optional<uint64_t> ControlPlane::HolderSession(const std::string& id) const {
  auto it = holders_.find(id);
  if (it == holders_.end()) return std::nullopt;
  return it->second;
}

uint64_t ControlPlane::refusals(proto::RegisterAck::Refusal kind) const {
  auto it = refusals_.find(kind);
  return it == refusals_.end() ? 0 : it->second;
}

std::vector<std::string> ControlPlane::Tick(TimePoint now) {
  std::vector<std::string> down;
  auto transitions = membership_.Tick(now);
  for (const auto& t : transitions) {
    if (t.to != membership::State::kDown) continue;
    down.push_back(t.id);
    holders_.erase(t.id);  // its session is closed by the shell; a restart may take the id
  }
  Log(transitions);
  return down;
}

Status ControlPlane::SetWeight(const std::string& id, uint32_t weight, TimePoint now) {
  VSC_ASSIGN_OR_RETURN(auto transitions, membership_.SetWeight(id, weight, now));
  spdlog::info("{} weight set to {} by operator", id, weight);
  Log(transitions);
  return Status::Ok();
}

Status ControlPlane::Drain(const std::string& id, TimePoint now) {
  VSC_ASSIGN_OR_RETURN(auto transitions, membership_.Drain(id, now));
  Log(transitions);
  return Status::Ok();
}

Status ControlPlane::Remove(const std::string& id, TimePoint now) {
  const membership::ServerRecord* rec = membership_.Find(id);
  const uint64_t incarnation = rec != nullptr ? rec->reg.incarnation : 0;
  VSC_ASSIGN_OR_RETURN(auto transitions, membership_.Remove(id, now));
  holders_.erase(id);
  if (!removed_.contains(id) && removed_.size() >= settings_.max_servers && !removed_.empty()) {
    removed_.erase(removed_.begin());
  }
  removed_[id] = incarnation;
  Log(transitions);
  return Status::Ok();
}

Status ControlPlane::BeginCatchUp(const std::string& id, const std::string& reason, TimePoint now) {
  VSC_ASSIGN_OR_RETURN(auto transitions, membership_.BeginCatchUp(id, reason, now));
  Log(transitions);
  return Status::Ok();
}

bool ControlPlane::StructureChanged() const {
  return published_membership_version_ != membership_.version();
}

bool ControlPlane::NeedsPublish() const { return load_changed_ || StructureChanged(); }

ViewPtr ControlPlane::BuildView() {
  ++view_version_;
  ViewPtr view = PeekView();
  published_membership_version_ = membership_.version();
  load_changed_ = false;
  return view;
}

ViewPtr ControlPlane::PeekView() const {
  auto view = std::make_shared<ClusterView>();
  view->version = view_version_;
  for (const auto& rec : membership_.Snapshot()) {
    if (rec.state == membership::State::kRemoved) continue;
    ViewServer s;
    s.id = rec.reg.id;
    s.backend.key = sched::StableKey(rec.reg.id);
    s.backend.weight = rec.weight;
    s.backend.available = membership::AcceptsNewWork(rec.state);
    s.backend.run_queue = rec.load.run_queue;
    s.backend.response_ms = rec.load.response_ms;
    // OnRegister refused unparsable endpoints, so a present endpoint parses here.
    for (int svc = 0; svc < kServiceCount; ++svc) {
      const auto* ep = FindEndpoint(rec.reg, kEndpointNames[svc]);
      const auto address = ep ? LookupEndpoint(*ep) : std::nullopt;
      if (!address) continue;
      s.address = *address;
      view->services[svc].push_back(s);
    }
  }
  return view;
}

}  // namespace vsc::director
