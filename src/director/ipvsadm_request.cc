#include "director/ipvsadm_request.h"

#include <nlohmann/json.hpp>

#include "director/service_routes.h"
#include "net/url_text.h"
#include "vservice/service_json.h"

namespace vsc::director {
namespace {

using nlohmann::json;
using vservice::Verb;

std::string ServerPath(const vservice::Command& c) {
  return ServicePath(*c.service) + "/servers/" +
         net::PercentEncode(vservice::ToString(*c.real_server));
}

// -A's whole service, or -E's patch: every key ipvsadm sets, null for persistence not given.
json ServiceBody(const vservice::Command& c, bool patch) {
  vservice::VirtualService s{*c.service, vservice::ToServiceConfig(c), {}};
  json body = vservice::ServiceToJson(s);
  if (!patch) return body;
  body.erase("protocol");
  body.erase("address");
  for (const char* key : {"persistence_timeout", "persistence_granularity"}) {
    if (!body.contains(key)) body[key] = nullptr;
  }
  body["ops"] = s.config.one_packet;
  return body;
}

}  // namespace

std::string ServicePath(const vservice::ServiceKey& key) {
  return "/v1/services/" + net::PercentEncode(vservice::KeyText(key));
}

Result<AdminRequest> RequestFor(const vservice::Command& c, std::string_view rules) {
  switch (c.verb) {
    case Verb::kAddService:
      return AdminRequest{"POST", "/v1/services", ServiceBody(c, false).dump()};
    case Verb::kEditService:
      return AdminRequest{"PUT", ServicePath(*c.service), ServiceBody(c, true).dump()};
    case Verb::kDelService:
      return AdminRequest{"DELETE", ServicePath(*c.service), ""};
    case Verb::kAddDest:
    case Verb::kEditDest: {
      const json body = vservice::ServerToJson(*c.real_server, vservice::ToDestConfig(c));
      return AdminRequest{c.verb == Verb::kAddDest ? "POST" : "PUT", ServerPath(c), body.dump()};
    }
    case Verb::kDelDest:
      return AdminRequest{"DELETE", ServerPath(c), ""};
    case Verb::kClear:
      return AdminRequest{"DELETE", "/v1/services", ""};
    case Verb::kZero: {
      json body = json::object();
      if (c.service) body["service"] = vservice::KeyText(*c.service);
      return AdminRequest{"POST", "/v1/services/zero", body.dump()};
    }
    case Verb::kRestore:
      return AdminRequest{"POST", "/v1/services/restore", std::string(rules)};
    case Verb::kSave:
      return AdminRequest{"GET", "/v1/services/save", ""};
    case Verb::kList:
      if (c.list.connections) return AdminRequest{"GET", std::string(kConnectionsPath), ""};
      if (c.list.timeouts) return AdminRequest{"GET", "/v1/services/timeouts", ""};
      return AdminRequest{"GET", c.service ? ServicePath(*c.service) : "/v1/services", ""};
    case Verb::kSetTimeouts: {
      const json body{
          {"tcp", c.timeouts.tcp}, {"tcpfin", c.timeouts.tcpfin}, {"udp", c.timeouts.udp}};
      return AdminRequest{"PUT", "/v1/services/timeouts", body.dump()};
    }
  }
  return InvalidArgument("unknown ipvsadm command");
}

}  // namespace vsc::director
