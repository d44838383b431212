// Helpers for the vservice tests: literal keys and addresses, and random valid configurations
// for the property tests (seeded, so every run is the same).
#pragma once

#include <gtest/gtest.h>

#include <string_view>

#include "common/random.h"
#include "sched/scheduler.h"
#include "vservice/service_key.h"
#include "vservice/virtual_service_table.h"

namespace vsc::vservice::testing {

inline void ExpectPrefix(const std::string& message, std::string_view prefix) {
  EXPECT_TRUE(message.starts_with(prefix)) << message;
}

inline ServiceKey Key(std::string_view proto, std::string_view vip_port) {
  auto k = ParseServiceKey(proto, vip_port);
  EXPECT_TRUE(k.ok()) << k.status().ToString();
  return k.ok() ? *k : ServiceKey{};
}

inline AddrPort Ap(std::string_view text) {
  auto p = ParseAddrPort(text);
  EXPECT_TRUE(p.ok() && p->port) << text;
  return p.ok() ? AddrPort{p->addr, p->port.value_or(0)} : AddrPort{};
}

// A small universe, so random operations collide (duplicates, missing keys) often.
inline IpAddress RandomAddress(Random& rng, Family family, uint8_t net) {
  if (family == Family::kV4) return IpAddress::V4((10u << 24) | (net << 8) | (1 + rng.Uniform(4)));
  std::array<uint8_t, 16> b{0x20, 0x01, 0x0d, 0xb8};
  b[7] = net;
  b[15] = static_cast<uint8_t>(1 + rng.Uniform(4));
  return IpAddress::V6(b);
}

inline ServiceKey RandomKey(Random& rng) {
  const Family family = rng.Uniform(3) == 0 ? Family::kV6 : Family::kV4;
  return ServiceKey{rng.Uniform(2) ? Proto::kUdp : Proto::kTcp, RandomAddress(rng, family, 0),
                    static_cast<uint16_t>(rng.Uniform(2) ? 80 : 53)};
}

inline AddrPort RandomDestAddr(Random& rng, Family family) {
  return AddrPort{RandomAddress(rng, family, 1), static_cast<uint16_t>(8000 + rng.Uniform(3))};
}

// A valid configuration for `key` that the ipvsadm save format can express.
inline ServiceConfig RandomServiceConfig(Random& rng, const ServiceKey& key) {
  ServiceConfig c;
  const auto names = sched::SchedulerNames();
  c.scheduler = std::string(names[rng.Uniform(names.size())]);
  if (rng.Uniform(2)) {
    const int max = key.vip.max_prefix();
    c.persistence = Persistence{
        static_cast<uint32_t>(1 + rng.Uniform(kMaxPersistenceTimeout)),
        static_cast<int>(key.vip.is_v4() ? rng.Uniform(max + 1) : 1 + rng.Uniform(max))};
  }
  c.one_packet = key.proto == Proto::kUdp && rng.Uniform(2);
  return c;
}

inline DestConfig RandomDestConfig(Random& rng, const ServiceKey& key) {
  DestConfig d;
  d.method = key.proto == Proto::kUdp && rng.Uniform(2) ? Method::kDr : Method::kNat;
  d.weight =
      static_cast<uint32_t>(rng.Uniform(3) == 0 ? rng.Uniform(kMaxWeight + 1) : rng.Uniform(5));
  if (rng.Uniform(3) == 0) {
    d.u_threshold = static_cast<uint32_t>(1 + rng.Uniform(1000));
    d.l_threshold = static_cast<uint32_t>(rng.Uniform(d.u_threshold + 1));
  }
  return d;
}

}  // namespace vsc::vservice::testing
