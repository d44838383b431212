#include "vservice/ip_address.h"

#include <arpa/inet.h>

#include <algorithm>
#include <bit>
#include <charconv>
#include <cstring>

#include "sched/hash.h"

namespace vsc::vservice {
namespace {

std::string Quoted(std::string_view text) { return "'" + std::string(text) + "'"; }

}  // namespace

std::optional<uint64_t> ParseDecimal(std::string_view text, uint64_t max) {
  uint64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || value > max) {
    return std::nullopt;
  }
  return value;
}

IpAddress IpAddress::V4(uint32_t host_order) {
  IpAddress a;
  a.bytes_[0] = static_cast<uint8_t>(host_order >> 24);
  a.bytes_[1] = static_cast<uint8_t>(host_order >> 16);
  a.bytes_[2] = static_cast<uint8_t>(host_order >> 8);
  a.bytes_[3] = static_cast<uint8_t>(host_order);
  return a;
}

IpAddress IpAddress::V6(const std::array<uint8_t, 16>& bytes) {
  IpAddress a;
  a.family_ = Family::kV6;
  a.bytes_ = bytes;
  return a;
}

Result<IpAddress> IpAddress::Parse(std::string_view text) {
  // inet_pton needs a NUL-terminated string; longer texts are no address anyway.
  char buf[INET6_ADDRSTRLEN + 1];
  if (text.empty() || text.size() >= sizeof(buf)) {
    return InvalidArgument("address " + Quoted(text) + " is not an IPv4 or IPv6 address");
  }
  std::memcpy(buf, text.data(), text.size());
  buf[text.size()] = '\0';
  IpAddress a;
  if (inet_pton(AF_INET, buf, a.bytes_.data()) == 1) return a;
  if (inet_pton(AF_INET6, buf, a.bytes_.data()) == 1) {
    a.family_ = Family::kV6;
    return a;
  }
  return InvalidArgument("address " + Quoted(text) +
                         " is not an IPv4 or IPv6 address; give it numerically, e.g. 10.0.0.1 "
                         "or 2001:db8::1 (names are not resolved)");
}

uint32_t IpAddress::v4() const {
  return (uint32_t{bytes_[0]} << 24) | (uint32_t{bytes_[1]} << 16) | (uint32_t{bytes_[2]} << 8) |
         uint32_t{bytes_[3]};
}

bool IpAddress::is_unspecified() const {
  for (uint8_t b : bytes_) {
    if (b != 0) return false;
  }
  return true;
}

IpAddress IpAddress::Masked(int prefix_len) const {
  IpAddress out = *this;
  const int bits = std::max(0, std::min(prefix_len, max_prefix()));
  for (int i = 0; i < 16; ++i) {
    const int keep = std::max(0, std::min(8, bits - 8 * i));
    out.bytes_[i] &= static_cast<uint8_t>(0xFF00u >> keep);
  }
  return out;
}

std::string IpAddress::ToString() const {
  char buf[INET6_ADDRSTRLEN];
  inet_ntop(is_v4() ? AF_INET : AF_INET6, bytes_.data(), buf, sizeof(buf));
  return buf;
}

std::string ToString(const AddrPort& ap) {
  const std::string host = ap.addr.ToString();
  const std::string port = std::to_string(ap.port);
  return ap.addr.is_v4() ? host + ":" + port : "[" + host + "]:" + port;
}

Result<ParsedAddrPort> ParseAddrPort(std::string_view text) {
  std::string_view host = text;
  std::optional<std::string_view> port_text;
  if (!text.empty() && text.front() == '[') {
    const size_t close = text.find(']');
    if (close == std::string_view::npos || close + 1 >= text.size() || text[close + 1] != ':') {
      return InvalidArgument(Quoted(text) + " is not [IPv6]:PORT; write e.g. [2001:db8::1]:80");
    }
    host = text.substr(1, close - 1);
    port_text = text.substr(close + 2);
  } else if (IpAddress::Parse(text).ok()) {
    host = text;  // a bare IPv6 address holds colons but no port
  } else if (const size_t colon = text.rfind(':'); colon != std::string_view::npos) {
    host = text.substr(0, colon);
    port_text = text.substr(colon + 1);
  }
  VSC_ASSIGN_OR_RETURN(IpAddress addr, IpAddress::Parse(host));
  if (!text.empty() && text.front() == '[' && addr.is_v4()) {
    return InvalidArgument(Quoted(text) + ": brackets are for IPv6 addresses only");
  }
  ParsedAddrPort out{addr, std::nullopt};
  if (port_text) {
    const std::optional<uint64_t> port = ParseDecimal(*port_text, 65535);
    if (!port) {
      return InvalidArgument("port " + Quoted(*port_text) + " in " + Quoted(text) +
                             " is not a number 0..65535 (service names are not resolved)");
    }
    out.port = static_cast<uint16_t>(*port);
  }
  return out;
}

Result<int> ParseNetmask(std::string_view text, Family family) {
  if (family == Family::kV6) {
    const std::optional<uint64_t> prefix = ParseDecimal(text, 128);
    if (!prefix || *prefix < 1) {
      return InvalidArgument("IPv6 netmask " + Quoted(text) +
                             " is not a prefix length 1..128; write e.g. -M 64");
    }
    return static_cast<int>(*prefix);
  }
  Result<IpAddress> mask = IpAddress::Parse(text);
  if (!mask.ok() || !mask->is_v4()) {
    return InvalidArgument("IPv4 netmask " + Quoted(text) +
                           " is not a dotted mask; write e.g. -M 255.255.255.0");
  }
  const uint32_t bits = mask->v4();
  const int prefix = std::countl_one(bits);
  if (prefix < 32 && (bits << prefix) != 0) {
    return InvalidArgument("IPv4 netmask " + Quoted(text) +
                           " is not contiguous; use leading ones only, e.g. 255.255.255.0");
  }
  return prefix;
}

std::string FormatNetmask(int prefix_len, Family family) {
  if (family == Family::kV6) return std::to_string(prefix_len);
  const uint32_t bits = prefix_len <= 0 ? 0 : ~uint32_t{0} << (32 - std::min(prefix_len, 32));
  return IpAddress::V4(bits).ToString();
}

size_t IpAddressHash::operator()(const IpAddress& a) const {
  uint64_t lo = 0;
  uint64_t hi = 0;
  std::memcpy(&lo, a.bytes().data(), 8);
  std::memcpy(&hi, a.bytes().data() + 8, 8);
  return sched::Mix64(lo ^ sched::Mix64(hi ^ static_cast<uint64_t>(a.family())));
}

size_t AddrPortHash::operator()(const AddrPort& ap) const {
  return sched::Mix64(IpAddressHash()(ap.addr) ^ ap.port);
}

}  // namespace vsc::vservice
