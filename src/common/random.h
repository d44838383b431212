// Seeded randomness. Components that need randomness take a Random& (or a seed); nothing below
// main() calls rand() or seeds from the clock, so every test run is reproducible.
//
// Not thread safe: one Random per thread or per component.
#pragma once

#include <cstdint>

namespace vsc {

// xoshiro256** (Blackman & Vigna): fast, good statistical quality, 256-bit state.
class Random {
 public:
  explicit Random(uint64_t seed);

  uint64_t Next();
  // Uniform in [0, n); n > 0. Lemire's multiply-shift with rejection, no modulo bias.
  uint64_t Uniform(uint64_t n);
  // Uniform in [0, 1).
  double NextDouble();

 private:
  uint64_t s_[4];
};

// Seed material from the operating system (getrandom), for main() only.
uint64_t OsSeed();

}  // namespace vsc
