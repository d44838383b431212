// Maglev lookup-table population (Maglev, NSDI 2016, §3.4, Pseudocode 1), with weights.
//
// Each backend walks its own permutation of the M slots, (offset + j * skip) mod M, and takes
// turns claiming its next preferred empty slot until every slot is filled. Weights change how
// often a backend gets a turn: every round each backend earns `weight` credit and takes one turn
// per `max_weight` credit, so a backend with twice the weight claims twice the slots (within one
// slot per backend). With equal weights this is exactly the paper's round-robin of turns.
//
// Pure function; O(M log M) average for equal weights.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace vsc::sched {

struct MaglevPermutation {
  uint32_t offset = 0;  // < M
  uint32_t skip = 1;    // in [1, M-1]; M prime makes every skip coprime to M
  uint32_t weight = 1;  // 0 = takes no slots
};

// True when m is prime (trial division; m is at most a few million).
bool IsPrime(uint32_t m);

// Returns M entries, each an index into `backends`. Empty when M == 0 or every weight is 0.
// Requires M prime (otherwise a permutation may not cover every slot and population could
// not finish; such an M returns an empty table instead of looping).
std::vector<uint32_t> BuildMaglevTable(std::span<const MaglevPermutation> backends, uint32_t m);

}  // namespace vsc::sched
