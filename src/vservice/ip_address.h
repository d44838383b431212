// IpAddress and AddrPort: IPv4 or IPv6 addresses as values, for the virtual-service table
// (DESIGN.md §3). Parsed and printed exactly as `ipvsadm -n` prints them: "10.0.0.1:80",
// "[2001:db8::1]:80".
//
// Pure: numeric addresses only (inet_pton/inet_ntop, no name or service lookups), no sockets,
// no allocation beyond the strings returned. Values are ordered like ipvsadm sorts its listing
// (IPv4 before IPv6, then by address bytes, then by port) and hashable. Failure returns
// kInvalidArgument naming the text and what was wrong with it.
#pragma once

#include <array>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/status.h"

namespace vsc::vservice {

// Ordered like the kernel's address families (AF_INET < AF_INET6), as ipvsadm sorts.
enum class Family : uint8_t { kV4 = 4, kV6 = 6 };

class IpAddress {
 public:
  IpAddress() = default;  // 0.0.0.0

  static IpAddress V4(uint32_t host_order);
  static IpAddress V6(const std::array<uint8_t, 16>& bytes);
  // A dotted quad ("10.0.0.1") or an IPv6 text ("2001:db8::1", no brackets).
  static Result<IpAddress> Parse(std::string_view text);

  Family family() const { return family_; }
  bool is_v4() const { return family_ == Family::kV4; }
  // Network byte order; an IPv4 address fills bytes()[0..3] and leaves the rest zero.
  const std::array<uint8_t, 16>& bytes() const { return bytes_; }
  size_t size() const { return is_v4() ? 4 : 16; }
  uint32_t v4() const;          // host byte order; only for IPv4
  bool is_unspecified() const;  // 0.0.0.0 or ::
  // 32 or 128: the prefix length of one host.
  int max_prefix() const { return is_v4() ? 32 : 128; }

  // The address with all bits after the first `prefix_len` cleared (prefix_len clamped to
  // [0, max_prefix()]): the client network that persistence keys on (ipvsadm -M).
  IpAddress Masked(int prefix_len) const;

  // "10.0.0.1" or "2001:db8::1" (inet_ntop, the text ipvsadm -n prints).
  std::string ToString() const;

  friend auto operator<=>(const IpAddress&, const IpAddress&) = default;

 private:
  Family family_ = Family::kV4;
  std::array<uint8_t, 16> bytes_{};
};

struct AddrPort {
  IpAddress addr;
  uint16_t port = 0;
  friend auto operator<=>(const AddrPort&, const AddrPort&) = default;
};

// "10.0.0.1:80" or "[2001:db8::1]:80" (ipvsadm's "%s%s%s:%u").
std::string ToString(const AddrPort& ap);

// What `ipvsadm -t|-r` accepts (numerically): "10.0.0.1", "10.0.0.1:80", "2001:db8::1",
// "[2001:db8::1]:80". A bracketed address must carry ":PORT", as in ipvsadm. The port, when
// present, is 0..65535 in decimal.
struct ParsedAddrPort {
  IpAddress addr;
  std::optional<uint16_t> port;
};
Result<ParsedAddrPort> ParseAddrPort(std::string_view text);

// Persistence granularity (ipvsadm -M). IPv4: a dotted netmask, which must be contiguous
// ("255.255.255.0"), returned as its prefix length 0..32. IPv6: a prefix length 1..128.
Result<int> ParseNetmask(std::string_view text, Family family);
// The inverse: "255.255.255.0" for (24, kV4), "64" for (64, kV6).
std::string FormatNetmask(int prefix_len, Family family);

// A decimal integer in [0, max], digits only (no sign, no spaces), as ipvsadm's
// string_to_number accepts; std::nullopt otherwise.
std::optional<uint64_t> ParseDecimal(std::string_view text, uint64_t max);

struct IpAddressHash {
  size_t operator()(const IpAddress& a) const;
};
struct AddrPortHash {
  size_t operator()(const AddrPort& ap) const;
};

}  // namespace vsc::vservice
