#include "director/service_listing.h"

#include <cinttypes>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "director/listing.h"

namespace vsc::director {
namespace {

using nlohmann::json;

std::string Upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

std::string ServiceHead(const json& config) {
  std::string mask = "255.255.255.255";
  uint32_t persistent = 0;
  if (config.contains("persistence_timeout")) {
    persistent = config["persistence_timeout"].get<uint32_t>();
    const std::string g = config.value("persistence_granularity", mask);
    if (g != "128") mask = g;  // the IPv6 host prefix prints no mask either
  }
  std::string line = ServiceLine(Upper(config.value("protocol", "")), config.value("address", ""),
                                 config.value("lb_algo", ""), persistent, mask);
  if (config.value("ops", false)) line += " ops";
  return line;
}

std::string Numbers(const std::string& lead, const json& v, const char* const keys[5], bool exact) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%-33s", lead.c_str());
  std::string line = buf;
  for (int i = 0; i < 5; ++i) {
    const json& x = v.at(keys[i]);
    line += LargeNum(
        x.is_number_float() ? static_cast<uint64_t>(x.get<double>() + 0.5) : x.get<uint64_t>(),
        exact);
  }
  return line;
}

constexpr const char* kStatKeys[5] = {"conns", "in_packets", "out_packets", "in_bytes",
                                      "out_bytes"};
constexpr const char* kRateKeys[5] = {"cps", "in_pps", "out_pps", "in_bps", "out_bps"};

std::string Title(const vservice::ListFlags& f) {
  char buf[160];
  if (f.stats || f.rate) {
    std::snprintf(buf, sizeof(buf), "%-33s %8s %8s %8s %8s %8s\n", "Prot LocalAddress:Port",
                  f.stats ? "Conns" : "CPS", f.stats ? "InPkts" : "InPPS",
                  f.stats ? "OutPkts" : "OutPPS", f.stats ? "InBytes" : "InBPS",
                  f.stats ? "OutBytes" : "OutBPS");
    return std::string(buf) + "  -> RemoteAddress:Port\n";
  }
  return "Prot LocalAddress:Port Scheduler Flags\n"
         "  -> RemoteAddress:Port           Forward Weight ActiveConn InActConn State Check\n";
}

void RenderOne(const json& s, const vservice::ListFlags& f, std::string& out) {
  const json& config = s.at("config");
  const bool numbers = f.stats || f.rate;
  const char* const* keys = f.stats ? kStatKeys : kRateKeys;
  const char* figures = f.stats ? "stats" : "rates";
  if (numbers) {
    out += Numbers(Upper(config.value("protocol", "")) + "  " + config.value("address", ""),
                   s.at(figures), keys, f.exact) +
           "\n";
  } else {
    out += ServiceHead(config) + "\n";
  }
  std::map<std::string, const json*> runtime;
  for (const json& r : s.at("servers")) runtime[r.value("address", "")] = &r;
  for (const json& d : config.value("server", json::array())) {
    const std::string addr = d.value("address", "");
    const json* r = runtime.contains(addr) ? runtime[addr] : nullptr;
    std::string shown = addr;
    if (r != nullptr && !r->value("server_id", "").empty()) {
      shown += " (" + r->value("server_id", "") + ")";
    }
    if (numbers) {
      static const json kZero = {
          {"conns", 0}, {"in_packets", 0}, {"out_packets", 0}, {"in_bytes", 0}, {"out_bytes", 0},
          {"cps", 0},   {"in_pps", 0},     {"out_pps", 0},     {"in_bps", 0},   {"out_bps", 0}};
      out += Numbers("  -> " + shown, r ? r->at(figures) : kZero, keys, f.exact) + "\n";
      continue;
    }
    std::string line =
        ServerLine(shown, d.value("lb_kind", "") == "DR" ? "Route" : "Masq", d.value("weight", 0u),
                   r ? r->value("active_conns", 0u) : 0, r ? r->value("inactive_conns", 0u) : 0,
                   r ? r->value("state", "") : "");
    if (r != nullptr && !r->value("check_result", "").empty()) {
      line += " " + r->value("check_result", "");
    }
    out += line + "\n";
  }
}

}  // namespace

std::string LargeNum(uint64_t n, bool exact) {
  char buf[32];
  if (exact) {
    const int len = std::snprintf(buf, sizeof(buf), "%" PRIu64, n);
    std::snprintf(buf, sizeof(buf), "%*" PRIu64, len + 1 > 9 ? len + 1 : 9, n);
  } else if (n < 100000000ull) {
    std::snprintf(buf, sizeof(buf), "%9" PRIu64, n);
  } else if (n < 1000000000ull) {
    std::snprintf(buf, sizeof(buf), "%8" PRIu64 "K", n / 1000);
  } else if (n < 100000000000ull) {
    std::snprintf(buf, sizeof(buf), "%8" PRIu64 "M", n / 1000000);
  } else if (n < 100000000000000ull) {
    std::snprintf(buf, sizeof(buf), "%8" PRIu64 "G", n / 1000000000);
  } else {
    std::snprintf(buf, sizeof(buf), "%8" PRIu64 "T", n / uint64_t{1000000000000});
  }
  return buf;
}

// --stats: after the table, the services that refused clients, and why (not an ipvsadm
// section: IPVS never refuses for lack of descriptors).
static std::string Refusals(const std::vector<const json*>& services) {
  std::string out;
  for (const json* s : services) {
    const json refused = s->value("refused", json::object());
    const uint64_t no_server = refused.value("no_server", uint64_t{0});
    const uint64_t no_fd = refused.value("no_descriptor", uint64_t{0});
    if (no_server == 0 && no_fd == 0) continue;
    const json& config = s->at("config");
    char buf[160];
    std::snprintf(
        buf, sizeof(buf), "%-33s %9" PRIu64 " %13" PRIu64 "\n",
        (Upper(config.value("protocol", "")) + "  " + config.value("address", "")).c_str(),
        no_server, no_fd);
    out += buf;
  }
  if (out.empty()) return out;
  return "\nRefused clients                   no server out of fds\n" + out;
}

std::string RenderServices(const json& answer, const vservice::ListFlags& flags) {
  std::string out = "IP Virtual Server (vscluster user-space director)\n" + Title(flags);
  std::vector<const json*> services;
  if (answer.contains("services")) {
    for (const json& s : answer["services"]) services.push_back(&s);
  } else {
    services.push_back(&answer);
  }
  for (const json* s : services) RenderOne(*s, flags, out);
  if (flags.stats) out += Refusals(services);
  return out;
}

std::string RenderConnections(const json& answer) {
  std::string out =
      "IPVS connection entries\n"
      "pro expire state       source             virtual            destination\n";
  for (const json& c : answer.value("connections", json::array())) {
    const int64_t expire = c.value("expire_s", int64_t{0});
    char when[32];
    std::snprintf(when, sizeof(when), "%02" PRId64 ":%02" PRId64, expire / 60, expire % 60);
    char line[256];
    std::snprintf(line, sizeof(line), "%-3s %-6s %-11s %-18s %-18s %s\n",
                  c.value("protocol", "").c_str(), when, c.value("state", "").c_str(),
                  c.value("source", "").c_str(), c.value("virtual", "").c_str(),
                  c.value("destination", "").c_str());
    out += line;
  }
  if (answer.value("truncated", false)) out += "(list truncated: too many entries)\n";
  return out;
}

std::string RenderTimeouts(const json& answer) {
  char buf[96];
  std::snprintf(buf, sizeof(buf), "Timeout (tcp tcpfin udp): %" PRIu64 " %" PRIu64 " %" PRIu64 "\n",
                answer.value("tcp", uint64_t{0}), answer.value("tcpfin", uint64_t{0}),
                answer.value("udp", uint64_t{0}));
  return buf;
}

}  // namespace vsc::director
