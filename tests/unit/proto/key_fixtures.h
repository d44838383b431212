// What the proto tests share: the key 00 01 .. 1f (the one the reference values in the tests and
// in docs/protocol.md were computed with) and bytes as lower-case hex.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>

#include "proto/cluster_key.h"

namespace vsc::proto::testing {

inline ClusterKey SequentialKey() {
  std::array<uint8_t, 32> b;
  for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<uint8_t>(i);
  return ClusterKey::FromBytes(b);
}

inline std::string Hex(std::span<const uint8_t> b) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string s;
  for (uint8_t x : b) {
    s.push_back(kDigits[x >> 4]);
    s.push_back(kDigits[x & 0xf]);
  }
  return s;
}

}  // namespace vsc::proto::testing
