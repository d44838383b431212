// 64-bit mixing used by mh: pure, fast, and stable across builds and hosts (the Maglev table
// must be identical on every worker and every director given the same keys and seed).
#pragma once

#include <cstdint>
#include <string_view>

namespace vsc::sched {

// The MurmurHash3 fmix64 finaliser: a bijection whose output bits each depend on every input
// bit, so nearby keys (consecutive client addresses) spread over the table.
inline uint64_t Mix64(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb93fe53ec34fULL;
  x ^= x >> 33;
  return x;
}

// A salted hash: different salts give independent-looking functions of the same value.
inline uint64_t SaltedHash(uint64_t value, uint64_t salt) {
  return Mix64(value ^ Mix64(salt + 0x9e3779b97f4a7c15ULL));
}

// FNV-1a of a name: the same name gives the same key in every process and every run, so
// Maglev and sh tables agree across a director restart (backend keys of servers and
// destinations).
inline uint64_t StableKey(std::string_view name) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : name) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

}  // namespace vsc::sched
