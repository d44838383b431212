#include "vservice/service_json.h"

#include <cstdint>
#include <limits>
#include <string>

#include "vservice/service_toml.h"

namespace vsc::vservice {
namespace {

using nlohmann::json;

// JSON values of a TOML document nest at most this deep (ours nest 4); deeper input is refused
// rather than recursed into.
constexpr int kMaxDepth = 16;

Result<toml::table> ToToml(const json& j, std::string_view where, int depth);

Result<toml::array> ToTomlArray(const json& j, std::string_view where, int depth) {
  toml::array a;
  for (const json& e : j) {
    if (e.is_object()) {
      VSC_ASSIGN_OR_RETURN(toml::table t, ToToml(e, where, depth + 1));
      a.push_back(std::move(t));
    } else if (e.is_string()) {
      a.push_back(e.get<std::string>());
    } else {
      return InvalidArgument(std::string(where) + ": an array may hold only objects here");
    }
  }
  return a;
}

// Inserts the TOML form of `v` at `key` of `t`.
Status InsertValue(toml::table& t, const std::string& key, const json& v, std::string_view where,
                   int depth) {
  const std::string at = std::string(where) + ": " + key;
  switch (v.type()) {
    case json::value_t::object: {
      VSC_ASSIGN_OR_RETURN(toml::table sub, ToToml(v, at, depth + 1));
      t.insert(key, std::move(sub));
      return Status::Ok();
    }
    case json::value_t::array: {
      VSC_ASSIGN_OR_RETURN(toml::array a, ToTomlArray(v, at, depth));
      t.insert(key, std::move(a));
      return Status::Ok();
    }
    case json::value_t::string:
      t.insert(key, v.get<std::string>());
      return Status::Ok();
    case json::value_t::boolean:
      t.insert(key, v.get<bool>());
      return Status::Ok();
    case json::value_t::number_integer:
      t.insert(key, v.get<int64_t>());
      return Status::Ok();
    case json::value_t::number_unsigned: {
      const uint64_t u = v.get<uint64_t>();
      if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) break;
      t.insert(key, static_cast<int64_t>(u));
      return Status::Ok();
    }
    case json::value_t::number_float:
      t.insert(key, v.get<double>());
      return Status::Ok();
    default:
      break;
  }
  return InvalidArgument(at + " must be a string, a number, true/false, an object or a list");
}

Result<toml::table> ToToml(const json& j, std::string_view where, int depth) {
  if (!j.is_object()) return InvalidArgument(std::string(where) + " must be a JSON object");
  if (depth > kMaxDepth) return InvalidArgument(std::string(where) + ": nested too deep");
  toml::table t;
  for (const auto& [key, value] : j.items()) {
    VSC_RETURN_IF_ERROR(InsertValue(t, key, value, where, depth));
  }
  return t;
}

json ToJson(const toml::node& n) {
  if (const toml::table* t = n.as_table()) {
    json o = json::object();
    for (auto&& [k, v] : *t) o[std::string(k.str())] = ToJson(v);
    return o;
  }
  if (const toml::array* a = n.as_array()) {
    json l = json::array();
    for (const toml::node& e : *a) l.push_back(ToJson(e));
    return l;
  }
  if (auto s = n.value_exact<std::string>()) return *s;
  if (auto b = n.value_exact<bool>()) return *b;
  if (auto i = n.value_exact<int64_t>()) return *i;
  if (auto d = n.value_exact<double>()) return *d;
  return nullptr;  // dates and times: the writers produce none
}

}  // namespace

json ServiceToJson(const VirtualService& service) { return ToJson(ServiceToml(service)); }

json ServerToJson(const AddrPort& address, const DestConfig& config) {
  return ToJson(ServerToml(address, config));
}

json TableToJson(const VirtualServiceTable& table) {
  json list = json::array();
  for (const auto& [key, service] : table.services()) list.push_back(ServiceToJson(service));
  return json{{"service", std::move(list)}};
}

Result<VirtualService> ServiceFromJson(const json& service, TableLimits limits) {
  VSC_ASSIGN_OR_RETURN(toml::table t, ToToml(service, "service", 0));
  VirtualServiceTable one(limits);
  VSC_RETURN_IF_ERROR(AddServiceFromToml(t, "service", one));
  return one.services().begin()->second;
}

Result<std::pair<AddrPort, DestConfig>> ServerFromJson(const json& server) {
  VSC_ASSIGN_OR_RETURN(toml::table t, ToToml(server, "server", 0));
  return ServerFromToml(t, "server");
}

Result<VirtualServiceTable> TableFromJson(const json& table, TableLimits limits) {
  VSC_ASSIGN_OR_RETURN(toml::table t, ToToml(table, "services", 0));
  return LoadServicesTable(t, "services", limits);
}

}  // namespace vsc::vservice
