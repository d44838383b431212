#include "realserver/fronted_service.h"

#include <algorithm>
#include <array>

#include "vservice/ip_address.h"

namespace vsc::realserver {
namespace {

constexpr std::array<std::string_view, 6> kBuiltin = {"lookup-udp", "lookup-tcp", "http",
                                                      "sql-udp",    "sql-tcp",    "relay"};
constexpr size_t kMaxName = 32;

bool NameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '.' || c == '-';
}

Status Bad(std::string_view spec, std::string_view why) {
  return InvalidArgument("--service '" + std::string(spec) + "': " + std::string(why) +
                         " (expected NAME=tcp:HOST:PORT or NAME=udp:HOST:PORT, e.g. "
                         "web=tcp:10.0.0.5:80)");
}

}  // namespace

bool IsBuiltinEndpointName(std::string_view name) {
  return std::find(kBuiltin.begin(), kBuiltin.end(), name) != kBuiltin.end();
}

Result<FrontedService> ParseFrontedService(std::string_view spec) {
  const size_t eq = spec.find('=');
  if (eq == std::string_view::npos) return Bad(spec, "no '=' after the name");
  FrontedService s;
  s.name = std::string(spec.substr(0, eq));
  if (s.name.empty() || s.name.size() > kMaxName ||
      !std::all_of(s.name.begin(), s.name.end(), NameChar)) {
    return Bad(spec, "the name must be 1-32 letters, digits, '_', '.' or '-'");
  }
  if (IsBuiltinEndpointName(s.name)) return Bad(spec, "the name '" + s.name + "' is vsc's own");
  std::string_view rest = spec.substr(eq + 1);
  const size_t colon = rest.find(':');
  if (colon == std::string_view::npos) return Bad(spec, "no protocol before the address");
  s.proto = std::string(rest.substr(0, colon));
  if (s.proto != "tcp" && s.proto != "udp") {
    return Bad(spec, "the protocol '" + s.proto + "' is not tcp or udp");
  }
  auto addr = vservice::ParseAddrPort(rest.substr(colon + 1));
  if (!addr.ok()) return Bad(spec, addr.status().message());
  if (!addr->port || *addr->port == 0) return Bad(spec, "the address needs a port 1-65535");
  if (addr->addr.is_unspecified()) {
    return Bad(spec,
               "the address must be one the director can connect to, not " + addr->addr.ToString());
  }
  s.host = addr->addr.ToString();
  s.port = *addr->port;
  return s;
}

Result<std::vector<FrontedService>> ParseFrontedServices(const std::vector<std::string>& specs) {
  std::vector<FrontedService> out;
  for (const std::string& spec : specs) {
    VSC_ASSIGN_OR_RETURN(FrontedService s, ParseFrontedService(spec));
    for (const FrontedService& seen : out) {
      if (seen.name == s.name) return Bad(spec, "the name '" + s.name + "' is given twice");
    }
    out.push_back(std::move(s));
  }
  return out;
}

proto::Endpoint ToEndpoint(const FrontedService& service) {
  proto::Endpoint e;
  e.set_service(service.name);
  e.set_host(service.host);
  e.set_port(service.port);
  e.set_proto(service.proto);
  return e;
}

}  // namespace vsc::realserver
