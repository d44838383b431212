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

// A check of a random type with random fields of that type.
inline CheckConfig RandomCheck(Random& rng) {
  CheckConfig c = DefaultCheck(static_cast<CheckType>(rng.Uniform(4)));
  c.delay_loop = std::chrono::milliseconds(1 + rng.Uniform(100000));
  c.connect_timeout = std::chrono::milliseconds(1 + rng.Uniform(10000));
  c.retry = static_cast<uint32_t>(rng.Uniform(10));
  c.delay_before_retry = std::chrono::milliseconds(1 + rng.Uniform(5000));
  c.alpha = rng.Uniform(2);
  c.inhibit_on_failure = rng.Uniform(2);
  switch (c.type) {
    case CheckType::kHttpGet:
      c.path = rng.Uniform(2) ? "/" : "/health \"quoted\"";
      c.status_min = static_cast<uint16_t>(100 + rng.Uniform(200));
      c.status_max = static_cast<uint16_t>(c.status_min + rng.Uniform(100));
      if (rng.Uniform(2)) c.digest = "0123456789abcdef0123456789abcdef";
      break;
    case CheckType::kUdp:
      c.payload = "0a0b";
      if (rng.Uniform(2)) c.expect = "0aXX";
      break;
    case CheckType::kMisc:
      c.misc_path = "/usr/bin/test -e /tmp/x";
      if (rng.Uniform(2)) c.misc_timeout = std::chrono::milliseconds(1 + rng.Uniform(9000));
      c.misc_dynamic = rng.Uniform(2);
      break;
    case CheckType::kTcp:
      break;
  }
  return c;
}

// Up to 5 services of up to 4 destinations with sorry servers, checks and agent ids.
inline VirtualServiceTable RandomTable(Random& rng) {
  VirtualServiceTable t;
  const int services = static_cast<int>(rng.Uniform(6));
  for (int i = 0; i < services; ++i) {
    const ServiceKey key = RandomKey(rng);
    ServiceConfig sc = RandomServiceConfig(rng, key);
    if (rng.Uniform(3) == 0) sc.sorry_server = RandomDestAddr(rng, key.vip.family());
    if (!t.AddService(key, sc).ok()) continue;  // a duplicate key: skip it
    const int dests = static_cast<int>(rng.Uniform(5));
    for (int d = 0; d < dests; ++d) {
      DestConfig dc = RandomDestConfig(rng, key);
      if (rng.Uniform(2)) dc.check = RandomCheck(rng);
      if (rng.Uniform(3) == 0) dc.agent_id = "rs" + std::to_string(d);
      dc.shutdown_sessions = rng.Uniform(4) == 0;
      (void)t.AddDest(key, RandomDestAddr(rng, key.vip.family()), dc);
    }
  }
  return t;
}

}  // namespace vsc::vservice::testing
