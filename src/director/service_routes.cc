#include "director/service_routes.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <string>
#include <utility>
#include <vector>

#include "director/http_json.h"
#include "net/url_text.h"
#include "vservice/ipvsadm_rules.h"
#include "vservice/service_json.h"

namespace vsc::director {
namespace {

using nlohmann::json;
using vservice::AddrPort;
using vservice::ServiceKey;
using vservice::VirtualService;
using vservice::VirtualServiceTable;

constexpr std::string_view kPrefix = "/v1/services";

// What a path under /v1/services names.
struct Target {
  enum class Kind { kCollection, kSave, kRestore, kZero, kTimeouts, kService, kServer } kind;
  ServiceKey key;
  AddrPort dest;
};

Result<Target> ParseTarget(std::string_view path) {
  std::string_view rest = path.substr(kPrefix.size());
  if (rest.empty() || rest == "/") return Target{Target::Kind::kCollection, {}, {}};
  if (rest == "/save") return Target{Target::Kind::kSave, {}, {}};
  if (rest == "/restore") return Target{Target::Kind::kRestore, {}, {}};
  if (rest == "/zero") return Target{Target::Kind::kZero, {}, {}};
  if (rest == "/timeouts") return Target{Target::Kind::kTimeouts, {}, {}};
  VSC_ASSIGN_OR_RETURN(std::string decoded, net::PercentDecode(rest.substr(1)));
  std::vector<std::string> parts;
  for (size_t start = 0;;) {
    const size_t slash = decoded.find('/', start);
    parts.push_back(decoded.substr(start, slash - start));
    if (slash == std::string::npos) break;
    start = slash + 1;
  }
  if (parts.size() != 2 && !(parts.size() == 4 && parts[2] == "servers")) {
    return NotFound("no such endpoint: " + std::string(path) +
                    " (use /v1/services/PROTO/VIP:PORT[/servers/ADDR:PORT])");
  }
  VSC_ASSIGN_OR_RETURN(ServiceKey key, vservice::ParseServiceKey(parts[0], parts[1]));
  if (parts.size() == 2) return Target{Target::Kind::kService, key, {}};
  VSC_ASSIGN_OR_RETURN(vservice::ParsedAddrPort dest, vservice::ParseAddrPort(parts[3]));
  if (!dest.port) {
    return InvalidArgument("server '" + parts[3] + "' needs a port, e.g. 192.168.1.11:80");
  }
  return Target{Target::Kind::kServer, key, AddrPort{dest.addr, *dest.port}};
}

std::string_view ChangeName(vservice::ChangeKind kind) {
  switch (kind) {
    case vservice::ChangeKind::kAddService:
      return "add-service";
    case vservice::ChangeKind::kEditService:
      return "edit-service";
    case vservice::ChangeKind::kDelService:
      return "delete-service";
    case vservice::ChangeKind::kAddDest:
      return "add-server";
    case vservice::ChangeKind::kEditDest:
      return "edit-server";
    case vservice::ChangeKind::kDelDest:
      return "delete-server";
    case vservice::ChangeKind::kClear:
      return "flush";
  }
  return "?";
}

json TimeoutsJson(const net::FlowTimeoutValues& t) {
  auto s = [](Duration d) { return std::chrono::duration_cast<std::chrono::seconds>(d).count(); };
  return json{{"tcp", s(t.tcp)}, {"tcpfin", s(t.tcpfin)}, {"udp", s(t.udp)}};
}

json ChangesJson(const std::vector<vservice::Change>& changes) {
  json list = json::array();
  for (const vservice::Change& c : changes) {
    json services = json::array();
    for (const ServiceKey& k : c.services) services.push_back(vservice::KeyText(k));
    json one{{"kind", ChangeName(c.kind)}, {"services", services}, {"modified", c.modified}};
    if (c.dest) one["server"] = vservice::ToString(*c.dest);
    if (c.dests_removed != 0) one["servers_removed"] = c.dests_removed;
    list.push_back(std::move(one));
  }
  return json{{"changes", std::move(list)}};
}

// A body's "protocol"/"address" (or a server's "address") may repeat the URL's, not change it.
Status SameKey(const json& body, const ServiceKey& key) {
  const bool proto_ok = !body.contains("protocol") ||
                        (body["protocol"].is_string() &&
                         vservice::ParseProto(body["protocol"].get<std::string>()).ok() &&
                         *vservice::ParseProto(body["protocol"].get<std::string>()) == key.proto);
  const bool addr_ok =
      !body.contains("address") || body["address"] == json(vservice::ToString(key.vip_port()));
  if (proto_ok && addr_ok) return Status::Ok();
  return InvalidArgument("the body names another service than the URL (" + vservice::KeyText(key) +
                         "); a key cannot change: DELETE the service and POST the new one");
}

Status SameDest(const json& body, const AddrPort& dest) {
  if (!body.contains("address") || body["address"] == json(vservice::ToString(dest))) {
    return Status::Ok();
  }
  return InvalidArgument("the body names another server than the URL (" + vservice::ToString(dest) +
                         "); an address cannot change: DELETE the server and POST the new one");
}

// Makes `table`'s service `next.key` equal to `next` with the table's own operations.
Status ReplaceService(VirtualServiceTable& table, const VirtualService& next) {
  VSC_RETURN_IF_ERROR(table.EditService(next.key, next.config).status());
  const VirtualService* now = table.Find(next.key);
  std::vector<AddrPort> gone;
  for (const auto& [addr, d] : now->dests) {
    if (!next.dests.contains(addr)) gone.push_back(addr);
  }
  for (const AddrPort& addr : gone) VSC_RETURN_IF_ERROR(table.DelDest(next.key, addr).status());
  for (const auto& [addr, d] : next.dests) {
    const bool exists = table.Find(next.key)->dests.contains(addr);
    auto changed = exists ? table.EditDest(next.key, addr, d) : table.AddDest(next.key, addr, d);
    VSC_RETURN_IF_ERROR(changed.status());
  }
  return Status::Ok();
}

Status AddWhole(VirtualServiceTable& table, const VirtualService& service) {
  VSC_RETURN_IF_ERROR(table.AddService(service.key, service.config).status());
  for (const auto& [addr, d] : service.dests) {
    VSC_RETURN_IF_ERROR(table.AddDest(service.key, addr, d).status());
  }
  return Status::Ok();
}

std::string RateKey(const ServiceKey& key) { return "svc " + vservice::KeyText(key); }
std::string RateKey(const ServiceKey& key, const AddrPort& dest) {
  return "dest " + vservice::KeyText(key) + " " + vservice::ToString(dest);
}

}  // namespace

json FlowsJson(ServiceEditor::FlowList list) {
  auto order = [](const FlowEntry& a, const FlowEntry& b) {
    return std::tie(a.proto, a.vip, a.source, a.state) <
           std::tie(b.proto, b.vip, b.source, b.state);
  };
  std::sort(list.entries.begin(), list.entries.end(), order);
  json out = json::array();
  for (const FlowEntry& e : list.entries) {
    out.push_back(
        {{"protocol", e.proto == vservice::Proto::kUdp ? "UDP" : "TCP"},
         {"state", e.state},
         {"expire_s", std::chrono::duration_cast<std::chrono::seconds>(e.expires_in).count()},
         {"source", vservice::ToString(e.source)},
         {"virtual", vservice::ToString(e.vip)},
         {"destination", vservice::ToString(e.dest)}});
  }
  return json{{"connections", std::move(out)}, {"truncated", list.truncated}};
}

bool ServiceRoutes::Owns(std::string_view path) {
  return path.substr(0, kPrefix.size()) == kPrefix &&
         (path.size() == kPrefix.size() || path[kPrefix.size()] == '/');
}

net::HttpResponse ServiceRoutes::Handle(const net::HttpRequest& req) {
  auto target = ParseTarget(req.path);
  if (!target.ok()) return ErrorResponse(target.status());
  const std::string& m = req.method;
  const ServiceKey& key = target->key;
  using Kind = Target::Kind;
  switch (target->kind) {
    case Kind::kCollection:
      if (m == "GET") return List();
      if (m == "POST") return Add(req.body);
      if (m == "DELETE") {
        return CommitEdit([](VirtualServiceTable& t) { return t.Clear(), Status::Ok(); });
      }
      break;
    case Kind::kSave:
      if (m == "GET") {
        net::HttpResponse r;
        r.content_type = "text/plain; charset=utf-8";
        r.body = vservice::SaveRules(editor_.table());
        return r;
      }
      break;
    case Kind::kRestore:
      if (m == "POST") return Restore(req.body);
      break;
    case Kind::kZero:
      if (m == "POST") return Zero(req.body);
      break;
    case Kind::kTimeouts:
      if (m == "GET") return JsonResponse(200, TimeoutsJson(editor_.Timeouts()));
      if (m == "PUT") return SetTimeouts(req.body);
      break;
    case Kind::kService:
      if (m == "GET") return Get(key);
      if (m == "PUT") return Put(key, req.body);
      if (m == "DELETE") {
        return CommitEdit([&key](VirtualServiceTable& t) { return t.DelService(key).status(); });
      }
      break;
    case Kind::kServer:
      if (m == "POST") return AddServer(key, target->dest, req.body);
      if (m == "PUT") return PutServer(key, target->dest, req.body);
      if (m == "DELETE") {
        return CommitEdit([&key, &target](VirtualServiceTable& t) {
          return t.DelDest(key, target->dest).status();
        });
      }
      break;
  }
  return ErrorResponse(405, "method " + m + " is not allowed on " + req.path);
}

template <typename Edit>
net::HttpResponse ServiceRoutes::CommitEdit(Edit&& edit) {
  VirtualServiceTable next = editor_.table();
  if (Status s = edit(next); !s.ok()) return ErrorResponse(s);
  auto changes = editor_.Commit(std::move(next));
  if (!changes.ok()) return ErrorResponse(changes.status());
  return JsonResponse(200, ChangesJson(*changes));
}

net::HttpResponse ServiceRoutes::Add(const std::string& body) {
  auto j = ParseJsonObject(body);
  if (!j.ok()) return ErrorResponse(j.status());
  auto service = vservice::ServiceFromJson(*j, editor_.table().limits());
  if (!service.ok()) return ErrorResponse(service.status());
  return CommitEdit([&service](VirtualServiceTable& t) { return AddWhole(t, *service); });
}

net::HttpResponse ServiceRoutes::Put(const ServiceKey& key, const std::string& body) {
  auto patch = ParseJsonObject(body);
  if (!patch.ok()) return ErrorResponse(patch.status());
  if (Status s = SameKey(*patch, key); !s.ok()) return ErrorResponse(s);
  const VirtualService* now = editor_.table().Find(key);
  if (now == nullptr) {
    return ErrorResponse(NotFound("No such service: " + vservice::ToString(key) +
                                  "; add it with POST /v1/services"));
  }
  json merged = vservice::ServiceToJson(*now);
  merged.merge_patch(*patch);
  auto next = vservice::ServiceFromJson(merged, editor_.table().limits());
  if (!next.ok()) return ErrorResponse(next.status());
  return CommitEdit([&next](VirtualServiceTable& t) { return ReplaceService(t, *next); });
}

net::HttpResponse ServiceRoutes::AddServer(const ServiceKey& key, const AddrPort& dest,
                                           const std::string& body) {
  auto j = body.empty() ? Result<json>(json::object()) : ParseJsonObject(body);
  if (!j.ok()) return ErrorResponse(j.status());
  if (Status s = SameDest(*j, dest); !s.ok()) return ErrorResponse(s);
  (*j)["address"] = vservice::ToString(dest);
  auto server = vservice::ServerFromJson(*j);
  if (!server.ok()) return ErrorResponse(server.status());
  return CommitEdit(
      [&](VirtualServiceTable& t) { return t.AddDest(key, dest, server->second).status(); });
}

net::HttpResponse ServiceRoutes::PutServer(const ServiceKey& key, const AddrPort& dest,
                                           const std::string& body) {
  auto patch = ParseJsonObject(body);
  if (!patch.ok()) return ErrorResponse(patch.status());
  if (Status s = SameDest(*patch, dest); !s.ok()) return ErrorResponse(s);
  const VirtualService* now = editor_.table().Find(key);
  if (now == nullptr) {
    return ErrorResponse(NotFound("Service not defined: " + vservice::ToString(key)));
  }
  auto it = now->dests.find(dest);
  if (it == now->dests.end()) {
    return ErrorResponse(NotFound("No such destination: " + vservice::ToString(dest) + " in " +
                                  vservice::ToString(key) + "; add it with POST"));
  }
  json merged = vservice::ServerToJson(dest, it->second);
  merged.merge_patch(*patch);
  merged["address"] = vservice::ToString(dest);
  auto server = vservice::ServerFromJson(merged);
  if (!server.ok()) return ErrorResponse(server.status());
  return CommitEdit(
      [&](VirtualServiceTable& t) { return t.EditDest(key, dest, server->second).status(); });
}

net::HttpResponse ServiceRoutes::Restore(const std::string& text) {
  auto next = vservice::ReplaceFromRules(editor_.table(), text);
  if (!next.ok()) return ErrorResponse(next.status());
  return CommitEdit([&next](VirtualServiceTable& t) { return t = *next, Status::Ok(); });
}

net::HttpResponse ServiceRoutes::Zero(const std::string& body) {
  std::optional<ServiceKey> key;
  if (!body.empty()) {
    auto j = ParseJsonObject(body);
    if (!j.ok()) return ErrorResponse(j.status());
    if (j->contains("service")) {
      if (!(*j)["service"].is_string()) {
        return ErrorResponse(InvalidArgument("service must be a string such as tcp/10.0.0.1:80"));
      }
      auto k = vservice::ParseKeyText((*j)["service"].get<std::string>());
      if (!k.ok()) return ErrorResponse(k.status());
      key = *k;
    }
  }
  if (Status s = editor_.ZeroCounters(key); !s.ok()) return ErrorResponse(s);
  return JsonResponse(200, json{{"ok", true}});
}

net::HttpResponse ServiceRoutes::SetTimeouts(const std::string& body) {
  auto j = ParseJsonObject(body);
  if (!j.ok()) return ErrorResponse(j.status());
  net::FlowTimeoutValues next{Duration::zero(), Duration::zero(), Duration::zero()};
  for (auto [name, out] : {std::pair{"tcp", &next.tcp}, std::pair{"tcpfin", &next.tcpfin},
                           std::pair{"udp", &next.udp}}) {
    if (!j->contains(name)) continue;
    const json& v = (*j)[name];
    if (!v.is_number_unsigned() || v.get<uint64_t>() > vservice::kMaxPersistenceTimeout) {
      return ErrorResponse(InvalidArgument(std::string("invalid timeout value `") + v.dump() +
                                           "' specified for " + name +
                                           "; use 0..2678400 seconds (0 keeps the current value)"));
    }
    *out = std::chrono::seconds(v.get<uint64_t>());
  }
  editor_.SetTimeouts(next);
  return JsonResponse(200, TimeoutsJson(editor_.Timeouts()));
}

json ServiceRoutes::ServiceJson(const VirtualService& service,
                                const ServiceRuntime* runtime) const {
  json servers = json::array();
  Totals totals;
  if (runtime != nullptr) {
    totals = ServiceTotals(*runtime);
    for (const DestRuntime& d : runtime->dests) {
      servers.push_back({{"address", vservice::ToString(d.dest)},
                         {"server_id", d.server_id},
                         {"usable", d.usable},
                         {"state", d.state},
                         {"check_result", d.check_result},
                         {"effective_weight", d.effective_weight},
                         {"active_conns", d.active_conns},
                         {"inactive_conns", d.inactive_conns},
                         {"stats", TotalsJson(DestTotals(d))},
                         {"rates", RatesJson(rates_.Get(RateKey(service.key, d.dest)))}});
    }
  }
  return {{"key", vservice::KeyText(service.key)},
          {"config", vservice::ServiceToJson(service)},
          {"stats", TotalsJson(totals)},
          {"refused",
           {{"no_server", runtime ? runtime->no_dest : 0},
            {"no_descriptor", runtime ? runtime->no_descriptor : 0}}},
          {"rates", RatesJson(rates_.Get(RateKey(service.key)))},
          {"servers", std::move(servers)}};
}

net::HttpResponse ServiceRoutes::List() const {
  std::map<ServiceKey, ServiceRuntime> runtime;
  for (ServiceRuntime& r : editor_.Runtime()) runtime.emplace(r.key, std::move(r));
  json list = json::array();
  for (const auto& [key, service] : editor_.table().services()) {
    auto it = runtime.find(key);
    list.push_back(ServiceJson(service, it == runtime.end() ? nullptr : &it->second));
  }
  return JsonResponse(200, json{{"services", std::move(list)}});
}

net::HttpResponse ServiceRoutes::Get(const ServiceKey& key) const {
  const VirtualService* service = editor_.table().Find(key);
  if (service == nullptr) {
    return ErrorResponse(NotFound("No such service: " + vservice::ToString(key)));
  }
  for (const ServiceRuntime& r : editor_.Runtime()) {
    if (r.key == key) return JsonResponse(200, ServiceJson(*service, &r));
  }
  return JsonResponse(200, ServiceJson(*service, nullptr));
}

void ServiceRoutes::SampleRates() {
  const TimePoint now = clock_.Now();
  for (const ServiceRuntime& r : editor_.Runtime()) {
    rates_.Update(RateKey(r.key), ServiceTotals(r), now);
    for (const DestRuntime& d : r.dests) rates_.Update(RateKey(r.key, d.dest), DestTotals(d), now);
  }
}

}  // namespace vsc::director
