// Big-endian (network order) integers of 1 to 8 bytes, appended to a byte vector or read from
// memory. Pure; for the sans-I/O codecs.
#pragma once

#include <cstdint>
#include <vector>

namespace vsc {

inline void PutBigEndian(std::vector<uint8_t>& out, uint64_t v, int bytes) {
  for (int shift = 8 * (bytes - 1); shift >= 0; shift -= 8) {
    out.push_back(static_cast<uint8_t>(v >> shift));
  }
}

inline uint64_t GetBigEndian(const uint8_t* p, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v = (v << 8) | p[i];
  return v;
}

}  // namespace vsc
