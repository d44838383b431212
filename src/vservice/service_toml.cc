#include "vservice/service_toml.h"

#include <toml++/toml.h>

#include <cmath>
#include <initializer_list>
#include <sstream>

#include "common/duration_text.h"
#include "common/toml_document.h"

namespace vsc::vservice {
namespace {

// Reads the keys of one TOML table, remembering which were used so that the rest can be
// reported as unknown. Every getter returns an error naming the key.
class Keys {
 public:
  Keys(const toml::table& t, std::string where) : t_(t), where_(std::move(where)) {}

  const toml::node* Get(std::string_view key) {
    used_.emplace_back(key);
    return t_.get(key);
  }
  Status Fail(std::string_view key, std::string_view what) const {
    return InvalidArgument(where_ + ": " + std::string(key) + " " + std::string(what));
  }
  Result<std::optional<std::string>> String(std::string_view key) {
    const toml::node* n = Get(key);
    if (n == nullptr) return std::optional<std::string>();
    if (!n->is_string()) return Fail(key, "must be a string");
    return std::optional<std::string>(*n->value<std::string>());
  }
  Result<std::optional<bool>> Bool(std::string_view key) {
    const toml::node* n = Get(key);
    if (n == nullptr) return std::optional<bool>();
    if (!n->is_boolean()) return Fail(key, "must be true or false");
    return std::optional<bool>(*n->value<bool>());
  }
  Result<std::optional<uint64_t>> Unsigned(std::string_view key, uint64_t max) {
    const toml::node* n = Get(key);
    if (n == nullptr) return std::optional<uint64_t>();
    const auto v = n->is_integer() ? n->value<int64_t>() : std::nullopt;
    if (!v || *v < 0 || static_cast<uint64_t>(*v) > max) {
      return Fail(key, "must be an integer from 0 to " + std::to_string(max));
    }
    return std::optional<uint64_t>(static_cast<uint64_t>(*v));
  }
  // Seconds as a number, or a string with a unit ("500ms", "2s"; bare = seconds).
  Result<std::optional<Duration>> Seconds(std::string_view key) {
    const toml::node* n = Get(key);
    if (n == nullptr) return std::optional<Duration>();
    int64_t ms = 0;
    if (n->is_integer() || n->is_floating_point()) {
      const double s =
          n->is_integer() ? static_cast<double>(*n->value<int64_t>()) : *n->value<double>();
      if (!(s >= 0) || s > 1e9 || std::floor(s * 1000) != s * 1000) {
        return Fail(key, "must be a number of seconds (whole milliseconds), e.g. 2 or 0.5");
      }
      ms = static_cast<int64_t>(s * 1000);
    } else if (n->is_string()) {
      std::string text = *n->value<std::string>();
      if (!text.empty() && std::isdigit(static_cast<unsigned char>(text.back()))) text += "s";
      auto d = ParseDuration(text, DurationUnit::kMillis);
      if (!d.ok()) return Fail(key, d.status().message());
      ms = *d;
    } else {
      return Fail(key, "must be seconds or a duration such as \"500ms\"");
    }
    return std::optional<Duration>(std::chrono::milliseconds(ms));
  }
  const toml::table* Table(std::string_view key) {
    const toml::node* n = Get(key);
    return n == nullptr ? nullptr : n->as_table();
  }
  // The first key that no getter asked for.
  Status RejectUnknown() const {
    for (auto&& [k, v] : t_) {
      bool known = false;
      for (const auto& u : used_) known = known || u == k.str();
      if (!known) {
        return InvalidArgument(where_ + ": unknown key '" + std::string(k.str()) + "'");
      }
    }
    return Status::Ok();
  }
  const std::string& where() const { return where_; }
  void set_where(std::string where) { where_ = std::move(where); }

 private:
  const toml::table& t_;
  std::string where_;
  std::vector<std::string> used_;
};

Result<Method> ParseMethod(Keys& k, std::string_view text) {
  std::string up;
  for (char c : text) up += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (up == "NAT" || up == "MASQ") return Method::kNat;
  if (up == "DR" || up == "ROUTE") return Method::kDr;
  if (up == "TUN") {
    return k.Fail("lb_kind", "TUN: IP-in-IP tunnelling needs the kernel; use NAT or DR");
  }
  return k.Fail("lb_kind", "'" + std::string(text) + "' is not NAT or DR");
}

Result<std::pair<uint16_t, uint16_t>> ParseStatusCode(Keys& k, const toml::node& n) {
  if (auto v = n.value<int64_t>(); n.is_integer() && v && *v >= 0 && *v <= 999) {
    return std::pair<uint16_t, uint16_t>(static_cast<uint16_t>(*v), static_cast<uint16_t>(*v));
  }
  if (n.is_string()) {
    const std::string s = *n.value<std::string>();
    const size_t dash = s.find('-');
    auto lo = ParseDecimal(s.substr(0, dash), 999);
    auto hi = dash == std::string::npos ? lo : ParseDecimal(s.substr(dash + 1), 999);
    if (lo && hi) {
      return std::pair<uint16_t, uint16_t>(static_cast<uint16_t>(*lo), static_cast<uint16_t>(*hi));
    }
  }
  return k.Fail("status_code", "must be a code (200) or a range (\"200-299\")");
}

// Lays the fields present in `t` over `c` (whose type may change with `type`).
Status ReadCheckFields(const toml::table& t, const std::string& where, CheckConfig& c) {
  Keys k(t, where);
  VSC_ASSIGN_OR_RETURN(auto type, k.String("type"));
  if (type) {
    auto parsed = ParseCheckType(*type);
    if (!parsed.ok()) return k.Fail("type", parsed.status().message());
    if (*parsed != c.type) c = DefaultCheck(*parsed);
  }
  for (auto [key, field] : {std::pair{"delay_loop", &c.delay_loop},
                            {"connect_timeout", &c.connect_timeout},
                            {"delay_before_retry", &c.delay_before_retry}}) {
    VSC_ASSIGN_OR_RETURN(auto d, k.Seconds(key));
    if (d) *field = *d;
  }
  VSC_ASSIGN_OR_RETURN(auto retry, k.Unsigned("retry", 1000000));
  if (retry) c.retry = static_cast<uint32_t>(*retry);
  for (auto [key, field] : {std::pair{"alpha", &c.alpha},
                            {"inhibit_on_failure", &c.inhibit_on_failure},
                            {"misc_dynamic", &c.misc_dynamic}}) {
    VSC_ASSIGN_OR_RETURN(auto b, k.Bool(key));
    if (b) *field = *b;
  }
  for (auto [key, field] : {std::pair{"path", &c.path},
                            {"digest", &c.digest},
                            {"payload", &c.payload},
                            {"require_reply", &c.expect},
                            {"misc_path", &c.misc_path}}) {
    VSC_ASSIGN_OR_RETURN(auto s, k.String(key));
    if (s) *field = *s;
  }
  if (const toml::node* n = k.Get("status_code")) {
    VSC_ASSIGN_OR_RETURN(auto range, ParseStatusCode(k, *n));
    c.status_min = range.first;
    c.status_max = range.second;
  }
  VSC_ASSIGN_OR_RETURN(auto misc_timeout, k.Seconds("misc_timeout"));
  if (misc_timeout) c.misc_timeout = *misc_timeout;
  return k.RejectUnknown();
}

Result<AddrPort> ReadAddrPort(Keys& k, std::string_view key, bool required) {
  VSC_ASSIGN_OR_RETURN(auto text, k.String(key));
  if (!text) {
    if (required) return k.Fail(key, "is required, e.g. \"10.0.0.1:80\"");
    return AddrPort{};
  }
  auto p = ParseAddrPort(*text);
  if (!p.ok()) return k.Fail(key, p.status().message());
  if (!p->port) return k.Fail(key, "'" + *text + "' needs a port, e.g. \"10.0.0.1:80\"");
  return AddrPort{p->addr, *p->port};
}

struct ServerDefaults {
  Method method = Method::kNat;  // keepalived's default lb_kind
  std::optional<CheckConfig> check;
  bool shutdown_sessions = false;
};

// HAProxy's `on-marked-down` action: "shutdown-sessions" or "none" (its default, no action).
Status ReadOnMarkedDown(Keys& k, bool& shutdown_sessions) {
  VSC_ASSIGN_OR_RETURN(auto text, k.String("on_marked_down"));
  if (!text) return Status::Ok();
  if (*text != "shutdown-sessions" && *text != "none") {
    return k.Fail("on_marked_down",
                  "must be \"shutdown-sessions\" (close its connections when its check marks "
                  "it down) or \"none\" (they go on), not \"" +
                      *text + "\"");
  }
  shutdown_sessions = *text == "shutdown-sessions";
  return Status::Ok();
}

Result<std::pair<AddrPort, DestConfig>> ParseServer(const toml::table& t, const std::string& where,
                                                    const ServerDefaults& defaults) {
  Keys k(t, where);
  VSC_ASSIGN_OR_RETURN(auto addr, ReadAddrPort(k, "address", true));
  DestConfig d;
  d.method = defaults.method;
  VSC_ASSIGN_OR_RETURN(auto kind, k.String("lb_kind"));
  if (kind) {
    VSC_ASSIGN_OR_RETURN(auto m, ParseMethod(k, *kind));
    d.method = m;
  }
  VSC_ASSIGN_OR_RETURN(auto weight, k.Unsigned("weight", kMaxWeight));
  if (weight) d.weight = static_cast<uint32_t>(*weight);
  VSC_ASSIGN_OR_RETURN(auto upper, k.Unsigned("uthreshold", kMaxThreshold));
  if (upper) d.u_threshold = static_cast<uint32_t>(*upper);
  VSC_ASSIGN_OR_RETURN(auto lower, k.Unsigned("lthreshold", kMaxThreshold));
  if (lower) d.l_threshold = static_cast<uint32_t>(*lower);
  VSC_ASSIGN_OR_RETURN(auto agent, k.String("agent"));
  if (agent) d.agent_id = *agent;
  d.shutdown_sessions = defaults.shutdown_sessions;
  VSC_RETURN_IF_ERROR(ReadOnMarkedDown(k, d.shutdown_sessions));
  d.check = defaults.check;
  if (const toml::table* c = k.Table("check")) {
    if (!d.check) d.check = CheckConfig{};
    VSC_RETURN_IF_ERROR(ReadCheckFields(*c, where + " check", *d.check));
  }
  VSC_RETURN_IF_ERROR(k.RejectUnknown());
  return std::pair<AddrPort, DestConfig>(addr, std::move(d));
}

Status ReadServer(const toml::table& t, const std::string& where, const ServiceKey& key,
                  const ServerDefaults& defaults, VirtualServiceTable& table) {
  VSC_ASSIGN_OR_RETURN(auto server, ParseServer(t, where, defaults));
  auto added = table.AddDest(key, server.first, server.second);
  if (!added.ok()) return InvalidArgument(where + ": " + added.status().message());
  return Status::Ok();
}

Result<ServiceConfig> ReadServiceConfig(Keys& k, const ServiceKey& key) {
  ServiceConfig c;
  VSC_ASSIGN_OR_RETURN(auto algo, k.String("lb_algo"));
  VSC_ASSIGN_OR_RETURN(auto sched, k.String("scheduler"));
  if (algo && sched) return k.Fail("scheduler", "and lb_algo say the same thing; give one");
  if (algo || sched) c.scheduler = algo ? *algo : *sched;
  VSC_ASSIGN_OR_RETURN(auto timeout, k.Seconds("persistence_timeout"));
  VSC_ASSIGN_OR_RETURN(auto granularity, k.String("persistence_granularity"));
  if (timeout || granularity) {
    // keepalived: a granularity alone turns persistence on with the default timeout.
    Persistence p;
    p.prefix_len = key.vip.max_prefix();
    if (timeout) {
      const auto s = std::chrono::duration_cast<std::chrono::seconds>(*timeout);
      if (s != *timeout || s.count() < 1 || s.count() > kMaxPersistenceTimeout) {
        return k.Fail("persistence_timeout", "must be whole seconds from 1 to 2678400");
      }
      p.timeout_s = static_cast<uint32_t>(s.count());
    }
    if (granularity) {
      auto prefix = ParseNetmask(*granularity, key.vip.family());
      if (!prefix.ok()) return k.Fail("persistence_granularity", prefix.status().message());
      p.prefix_len = *prefix;
    }
    c.persistence = p;
  }
  VSC_ASSIGN_OR_RETURN(auto ops, k.Bool("ops"));
  c.one_packet = ops.value_or(false);
  VSC_ASSIGN_OR_RETURN(auto sorry_text, k.String("sorry_server"));
  if (sorry_text) {
    VSC_ASSIGN_OR_RETURN(auto sorry, ReadAddrPort(k, "sorry_server", true));
    c.sorry_server = sorry;
  }
  return c;
}

Status ReadService(const toml::table& t, const std::string& where, VirtualServiceTable& table) {
  Keys k(t, where);
  VSC_ASSIGN_OR_RETURN(auto proto_text, k.String("protocol"));
  VSC_ASSIGN_OR_RETURN(auto vip, ReadAddrPort(k, "address", true));
  if (!proto_text) return k.Fail("protocol", "is required: \"tcp\" or \"udp\"");
  auto proto = ParseProto(*proto_text);
  if (!proto.ok()) return k.Fail("protocol", proto.status().message());
  const ServiceKey key{*proto, vip.addr, vip.port};
  const std::string named = where + " (" + ToString(key) + ")";
  k.set_where(named);
  VSC_ASSIGN_OR_RETURN(auto config, ReadServiceConfig(k, key));
  if (auto added = table.AddService(key, config); !added.ok()) {
    return InvalidArgument(named + ": " + added.status().message());
  }
  ServerDefaults defaults;
  VSC_ASSIGN_OR_RETURN(auto kind, k.String("lb_kind"));
  if (kind) {
    VSC_ASSIGN_OR_RETURN(auto m, ParseMethod(k, *kind));
    defaults.method = m;
  }
  if (const toml::table* c = k.Table("check")) {
    defaults.check = CheckConfig{};
    VSC_RETURN_IF_ERROR(ReadCheckFields(*c, named + " check", *defaults.check));
  }
  VSC_RETURN_IF_ERROR(ReadOnMarkedDown(k, defaults.shutdown_sessions));
  if (const toml::node* servers = k.Get("server")) {
    const toml::array* list = servers->as_array();
    if (list == nullptr) return k.Fail("server", "must be [[service.server]] tables");
    for (size_t i = 0; i < list->size(); ++i) {
      const toml::table* s = list->get(i)->as_table();
      const std::string swhere = named + " server " + std::to_string(i + 1);
      if (s == nullptr) return InvalidArgument(swhere + ": must be a table");
      VSC_RETURN_IF_ERROR(ReadServer(*s, swhere, key, defaults, table));
    }
  }
  return k.RejectUnknown();
}

std::string DurationText(Duration d) {
  return std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(d).count()) + "ms";
}

// Every field the check's type reads (the others must stay at their defaults).
toml::table CheckToml(const CheckConfig& c) {
  toml::table t{{"type", std::string(CheckTypeName(c.type))},
                {"delay_loop", DurationText(c.delay_loop)},
                {"connect_timeout", DurationText(c.connect_timeout)},
                {"retry", static_cast<int64_t>(c.retry)},
                {"delay_before_retry", DurationText(c.delay_before_retry)},
                {"alpha", c.alpha},
                {"inhibit_on_failure", c.inhibit_on_failure}};
  switch (c.type) {
    case CheckType::kHttpGet:
      t.insert("path", c.path);
      t.insert("status_code", std::to_string(c.status_min) + "-" + std::to_string(c.status_max));
      if (!c.digest.empty()) t.insert("digest", c.digest);
      break;
    case CheckType::kUdp:
      t.insert("payload", c.payload);
      if (!c.expect.empty()) t.insert("require_reply", c.expect);
      break;
    case CheckType::kMisc:
      t.insert("misc_path", c.misc_path);
      if (c.misc_timeout) t.insert("misc_timeout", DurationText(*c.misc_timeout));
      t.insert("misc_dynamic", c.misc_dynamic);
      break;
    case CheckType::kTcp:
      break;
  }
  return t;
}

}  // namespace

toml::table ServerToml(const AddrPort& addr, const DestConfig& d) {
  toml::table t{{"address", ToString(addr)},
                {"lb_kind", d.method == Method::kDr ? "DR" : "NAT"},
                {"weight", static_cast<int64_t>(d.weight)},
                {"uthreshold", static_cast<int64_t>(d.u_threshold)},
                {"lthreshold", static_cast<int64_t>(d.l_threshold)}};
  if (!d.agent_id.empty()) t.insert("agent", d.agent_id);
  if (d.shutdown_sessions) t.insert("on_marked_down", "shutdown-sessions");
  if (d.check) t.insert("check", CheckToml(*d.check));
  return t;
}

toml::table ServiceToml(const VirtualService& vs) {
  const ServiceConfig& c = vs.config;
  toml::table t{{"protocol", std::string(ProtoName(vs.key.proto))},
                {"address", ToString(vs.key.vip_port())},
                {"lb_algo", c.scheduler}};
  if (c.persistence) {
    t.insert("persistence_timeout", static_cast<int64_t>(c.persistence->timeout_s));
    t.insert("persistence_granularity",
             FormatNetmask(c.persistence->prefix_len, vs.key.vip.family()));
  }
  if (c.one_packet) t.insert("ops", true);
  if (c.sorry_server) t.insert("sorry_server", ToString(*c.sorry_server));
  toml::array servers;
  for (const auto& [addr, d] : vs.dests) servers.push_back(ServerToml(addr, d));
  if (!servers.empty()) t.insert("server", std::move(servers));
  return t;
}

Result<std::pair<AddrPort, DestConfig>> ServerFromToml(const toml::table& t,
                                                       std::string_view where) {
  return ParseServer(t, std::string(where), ServerDefaults{});
}

Status AddServiceFromToml(const toml::table& t, std::string_view where,
                          VirtualServiceTable& table) {
  return ReadService(t, std::string(where), table);
}

std::string SaveServicesToml(const VirtualServiceTable& table) {
  toml::array services;
  for (const auto& [key, vs] : table.services()) services.push_back(ServiceToml(vs));
  toml::table root;
  if (!services.empty()) root.insert("service", std::move(services));
  std::ostringstream out;
  out << toml::toml_formatter(root) << "\n";
  return out.str();
}

Result<VirtualServiceTable> LoadServicesToml(std::string_view text, std::string_view origin,
                                             TableLimits limits) {
  VSC_ASSIGN_OR_RETURN(toml::table root, ParseTomlDocument(text, origin));
  return LoadServicesTable(root, origin, limits);
}

Result<VirtualServiceTable> LoadServicesTable(const toml::table& root, std::string_view origin,
                                              TableLimits limits) {
  VirtualServiceTable table(limits);
  const toml::node* services = root.get("service");
  if (services == nullptr) return table;
  const toml::array* list = services->as_array();
  if (list == nullptr) {
    return InvalidArgument(std::string(origin) + ": service must be [[service]] tables");
  }
  for (size_t i = 0; i < list->size(); ++i) {
    const toml::table* t = list->get(i)->as_table();
    const std::string where = std::string(origin) + ": service " + std::to_string(i + 1);
    if (t == nullptr) return InvalidArgument(where + ": must be a table");
    VSC_RETURN_IF_ERROR(ReadService(*t, where, table));
  }
  return table;
}

}  // namespace vsc::vservice
