#include "director/listing.h"

#include <cinttypes>
#include <cstdio>

namespace vsc::director {
namespace {

std::string Fmt(const char* fmt, auto... args) {
  char buf[512];
  std::snprintf(buf, sizeof(buf), fmt, args...);
  return buf;
}

}  // namespace

std::string ServiceLine(const std::string& proto, const std::string& address,
                        const std::string& scheduler, uint32_t persistent_s,
                        const std::string& netmask) {
  std::string line = proto + "  " + address + " " + scheduler;
  if (persistent_s > 0) {
    line += " persistent " + std::to_string(persistent_s);
    if (netmask != "255.255.255.255") line += " mask " + netmask;
  }
  return line;
}

std::string ServerLine(const std::string& address, const std::string& forward, uint64_t weight,
                       uint64_t active, uint64_t inactive, const std::string& state) {
  std::string line = Fmt("  -> %-28s %-7s %-6" PRIu64 " %-10" PRIu64 " %-10" PRIu64,
                         address.c_str(), forward.c_str(), weight, active, inactive);
  if (!state.empty()) line += " " + state;
  return line;
}

std::string NumbersLine(const std::string& first, const std::string& address, double a, double b,
                        double c, double d, double e) {
  std::string lead = first == "->" ? "  -> " + address : first + "  " + address;
  // ipvsadm pads "PROT  ADDR" and "  -> ADDR" to 33 columns, then 8-wide numbers.
  return Fmt("%-33s %8.0f %8.0f %8.0f %8.0f %8.0f", lead.c_str(), a, b, c, d, e);
}

std::string RenderListing(const nlohmann::json& status, ListingMode mode) {
  std::string out = "vscluster director (" + status.value("version", std::string("?")) + ")\n";
  switch (mode) {
    case ListingMode::kTable:
      out += "Prot LocalAddress:Port Scheduler Flags\n";
      out += "  -> RemoteAddress:Port           Forward Weight ActiveConn InActConn State\n";
      break;
    case ListingMode::kStats:
      out += Fmt("%-33s %8s %8s %8s %8s %8s\n", "Prot LocalAddress:Port", "Conns", "InPkts",
                 "OutPkts", "InBytes", "OutBytes");
      out += "  -> RemoteAddress:Port\n";
      break;
    case ListingMode::kRate:
      out += Fmt("%-33s %8s %8s %8s %8s %8s\n", "Prot LocalAddress:Port", "CPS", "InPPS",
                 "OutPPS", "InBPS", "OutBPS");
      out += "  -> RemoteAddress:Port\n";
      break;
  }
  for (const auto& svc : status.at("services")) {
    const std::string proto = svc.at("protocol");
    const std::string address = svc.at("address");
    if (mode == ListingMode::kTable) {
      out += ServiceLine(proto, address, svc.at("scheduler"), svc.at("persistence_timeout_s"),
                         svc.at("persistence_netmask")) +
             "\n";
    } else {
      const auto& v = svc.at(mode == ListingMode::kStats ? "stats" : "rates");
      if (mode == ListingMode::kStats) {
        out += NumbersLine(proto, address, v.at("conns"), v.at("in_packets"), v.at("out_packets"),
                           v.at("in_bytes"), v.at("out_bytes")) + "\n";
      } else {
        out += NumbersLine(proto, address, v.at("cps"), v.at("in_pps"), v.at("out_pps"),
                           v.at("in_bps"), v.at("out_bps")) + "\n";
      }
    }
    for (const auto& s : svc.at("servers")) {
      if (mode == ListingMode::kTable) {
        out += ServerLine(s.at("address"), s.at("forward"), s.at("weight"), s.at("active"),
                          s.at("inactive"), s.at("state")) +
               "\n";
      } else if (mode == ListingMode::kStats) {
        const auto& v = s.at("stats");
        out += NumbersLine("->", s.at("address"), v.at("conns"), v.at("in_packets"),
                           v.at("out_packets"), v.at("in_bytes"), v.at("out_bytes")) + "\n";
      } else {
        const auto& v = s.at("rates");
        out += NumbersLine("->", s.at("address"), v.at("cps"), v.at("in_pps"), v.at("out_pps"),
                           v.at("in_bps"), v.at("out_bps")) + "\n";
      }
    }
  }
  return out;
}

}  // namespace vsc::director
