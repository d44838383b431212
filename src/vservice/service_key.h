// ServiceKey: what names a virtual service, `(protocol, VIP, port)` (DESIGN.md §3), a value type
// like Katran's VipKey. IPv4 or IPv6 alike.
//
// Ordered as ipvsadm sorts services in `-L` and `-S` (ipvs_cmp_services in libipvs: address
// family, then protocol, then address, then port) and hashable, so the same order holds in
// every listing and save file. Pure.
#pragma once

#include <compare>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"
#include "vservice/ip_address.h"

namespace vsc::vservice {

// Values are the IP protocol numbers, so that TCP sorts before UDP as in ipvsadm.
enum class Proto : uint8_t { kTcp = 6, kUdp = 17 };

// "tcp" / "udp".
std::string_view ProtoName(Proto proto);
// "tcp" or "udp", any case (keepalived writes `protocol TCP`). InvalidArgument otherwise.
Result<Proto> ParseProto(std::string_view text);

struct ServiceKey {
  Proto proto = Proto::kTcp;
  IpAddress vip;
  uint16_t port = 0;

  AddrPort vip_port() const { return {vip, port}; }

  friend std::strong_ordering operator<=>(const ServiceKey& a, const ServiceKey& b);
  friend bool operator==(const ServiceKey&, const ServiceKey&) = default;
};

// "TCP 10.0.0.1:80", "UDP [2001:db8::1]:53": ipvsadm -L -n's "Prot LocalAddress:Port".
std::string ToString(const ServiceKey& key);

// ("tcp", "10.0.0.1:80") -> the key. The port is required here; InvalidArgument names the
// part that is wrong.
Result<ServiceKey> ParseServiceKey(std::string_view proto, std::string_view vip_port);

// "tcp/10.0.0.1:80", "udp/[2001:db8::1]:53": the admin API's name of a service
// (/v1/services/{key}) and the `service` label of its metrics.
std::string KeyText(const ServiceKey& key);
// The inverse: "PROTO/VIP:PORT". InvalidArgument naming what is wrong.
Result<ServiceKey> ParseKeyText(std::string_view text);

struct ServiceKeyHash {
  size_t operator()(const ServiceKey& key) const;
};

}  // namespace vsc::vservice
