// A cluster key for tests: 32 bytes of `fill`, so two tests that need different clusters pass
// different fills. Header-only, for unit and integration tests alike.
#pragma once

#include <array>
#include <cstdint>

#include "proto/cluster_key.h"

namespace vsc::test_support {

inline proto::ClusterKey TestKey(uint8_t fill = 7) {
  std::array<uint8_t, proto::ClusterKey::kBytes> b;
  b.fill(fill);
  return proto::ClusterKey::FromBytes(b);
}

}  // namespace vsc::test_support
