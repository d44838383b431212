#include "vservice/service_key.h"

#include <cctype>

#include "sched/hash.h"

namespace vsc::vservice {

std::string_view ProtoName(Proto proto) { return proto == Proto::kTcp ? "tcp" : "udp"; }

Result<Proto> ParseProto(std::string_view text) {
  std::string lower(text);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower == "tcp") return Proto::kTcp;
  if (lower == "udp") return Proto::kUdp;
  return InvalidArgument("protocol '" + std::string(text) + "' is not tcp or udp");
}

std::strong_ordering operator<=>(const ServiceKey& a, const ServiceKey& b) {
  if (auto c = a.vip.family() <=> b.vip.family(); c != 0) return c;
  if (auto c = a.proto <=> b.proto; c != 0) return c;
  if (auto c = a.vip <=> b.vip; c != 0) return c;
  return a.port <=> b.port;
}

std::string ToString(const ServiceKey& key) {
  return std::string(key.proto == Proto::kTcp ? "TCP " : "UDP ") + ToString(key.vip_port());
}

Result<ServiceKey> ParseServiceKey(std::string_view proto, std::string_view vip_port) {
  VSC_ASSIGN_OR_RETURN(Proto p, ParseProto(proto));
  VSC_ASSIGN_OR_RETURN(ParsedAddrPort ap, ParseAddrPort(vip_port));
  if (!ap.port) {
    return InvalidArgument("virtual service '" + std::string(vip_port) +
                           "' has no port; write VIP:PORT, e.g. 10.0.0.1:80 or [2001:db8::1]:80");
  }
  return ServiceKey{p, ap.addr, *ap.port};
}

std::string KeyText(const ServiceKey& key) {
  return std::string(ProtoName(key.proto)) + "/" + ToString(key.vip_port());
}

Result<ServiceKey> ParseKeyText(std::string_view text) {
  const size_t slash = text.find('/');
  if (slash == std::string_view::npos) {
    return InvalidArgument("service '" + std::string(text) +
                           "' is not PROTO/VIP:PORT, e.g. tcp/10.0.0.1:80 or udp/[::1]:53");
  }
  return ParseServiceKey(text.substr(0, slash), text.substr(slash + 1));
}

size_t ServiceKeyHash::operator()(const ServiceKey& key) const {
  return sched::Mix64(AddrPortHash()(key.vip_port()) ^
                      (uint64_t{static_cast<uint8_t>(key.proto)} << 32));
}

}  // namespace vsc::vservice
