// Chord identifiers (DESIGN.md §8): a point on the circle of 2^64 ids, the first 8 bytes of the
// SHA-1 of a name or key read big endian (m = 64). Node ids come from a node's configured name,
// key ids from the key itself; both use the same hash, so the two spaces are one circle.
//
// Intervals are clockwise and wrap around 0. Following Chord, an interval whose two ends are the
// same point is the whole circle: (a, a] holds every id, (a, a) every id but a. All functions are
// pure and safe from any thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace vsc::ring {

using RingId = uint64_t;

inline constexpr int kIdBits = 64;  // m: ids are taken modulo 2^64

// First 8 bytes of SHA-1(bytes), big endian.
RingId HashId(std::string_view bytes);
inline RingId NodeId(std::string_view name) { return HashId(name); }
inline RingId KeyId(std::string_view key) { return HashId(key); }

// Clockwise distance from `from` to `to`: (to - from) mod 2^64; 0 when they are equal.
constexpr uint64_t Distance(RingId from, RingId to) { return to - from; }

// x in (a, b]: strictly after a, at or before b, clockwise. (a, a] is the whole circle.
constexpr bool InOpenClosed(RingId x, RingId a, RingId b) {
  return a == b || (x != a && Distance(a, x) <= Distance(a, b));
}

// x in (a, b): strictly between a and b, clockwise. (a, a) is the circle without a.
constexpr bool InOpen(RingId x, RingId a, RingId b) {
  return x != a && (a == b || Distance(a, x) < Distance(a, b));
}

// "0x" and 16 lowercase hex digits, for logs and error messages.
std::string IdHex(RingId id);

}  // namespace vsc::ring
