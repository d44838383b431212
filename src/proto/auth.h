// Message authentication for the control plane (DESIGN.md §9, §12): HMAC-SHA256 under the
// cluster key, per-sender replay protection, and the counters senders stamp on messages.
// envelope.h puts these together into the wire format.
#pragma once

#include <openssl/types.h>

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <list>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>

#include "common/status.h"
#include "proto/cluster_key.h"

namespace vsc::proto {

// HMAC-SHA256 keyed once; each Compute() reuses the keyed OpenSSL context (EVP_MAC re-init with
// the stored key), so the key schedule and allocations are paid once per object, not per message.
// Not thread safe: one per thread or per session. OpenSSL failing to compute an HMAC over memory
// is a broken invariant and aborts.
class HmacSha256 {
 public:
  static constexpr size_t kTagBytes = 32;
  using Tag = std::array<uint8_t, kTagBytes>;

  explicit HmacSha256(const ClusterKey& key);
  HmacSha256(const HmacSha256&) = delete;
  HmacSha256& operator=(const HmacSha256&) = delete;
  HmacSha256(HmacSha256&& other) noexcept;
  HmacSha256& operator=(HmacSha256&& other) noexcept;
  ~HmacSha256();

  Tag Compute(std::span<const uint8_t> data);

  // True when tag is the HMAC of data; the comparison takes the same time wherever they differ.
  bool Verify(std::span<const uint8_t> data, std::span<const uint8_t, kTagBytes> tag);

 private:
  EVP_MAC_CTX* ctx_ = nullptr;
};

// Per-sender anti-replay window, as IPsec does it (RFC 4303 §3.4.3): a counter is accepted once,
// and only if it is above the highest seen from that sender or within the 64 counters below it.
// UDP reordering within the window is therefore tolerated, while duplicates and anything older
// are refused. Call Accept() only for messages whose tag has been verified, or a forger could
// advance the window and lock a real sender out.
//
// At most max_senders senders are tracked; a new sender beyond that evicts the least recently
// accepted one (counted in evictions()). Senders are authenticated holders of the cluster key
// and the table is sized well above the cluster, so an eviction means a long-silent sender; the
// cost is that messages captured from that sender could be replayed once after it is evicted.
// Refusing new senders instead would lock out a legitimate new server forever.
//
// A restarted sender is accepted because its counter restarts at the wall clock (CounterSource)
// — unless its clock stepped back across the restart. Receivers therefore choose the key so
// that a restart starts a window of its own: the director keys heartbeat windows by server id
// and incarnation, and forgets (Forget) the old incarnation's window when a new one registers or
// the server is removed; TCP control sessions keep one guard per session, whose first message is
// proven fresh by the session challenge (docs/protocol.md, "Session handshake").
//
// Not thread safe: owned by the thread that receives the messages.
class ReplayGuard {
 public:
  static constexpr uint64_t kWindow = 64;
  static constexpr size_t kDefaultMaxSenders = 4096;

  explicit ReplayGuard(size_t max_senders = kDefaultMaxSenders);

  // OK and recorded when counter is fresh for sender. Unauthenticated when it was accepted
  // before (a replay or a network duplicate) or is kWindow or more below the highest accepted.
  Status Accept(std::string_view sender, uint64_t counter);

  // Drops what is known about sender (the window's key); its next counter is accepted whatever
  // it is. For a key that will not be used again, or whose freshness is proven another way.
  void Forget(std::string_view sender);

  size_t senders() const { return windows_.size(); }
  uint64_t evictions() const { return evictions_; }

 private:
  struct Window {
    uint64_t highest = 0;
    // Bit i set: counter highest - i was accepted. Bit 0 is always set.
    uint64_t seen = 0;
    std::list<std::string>::iterator lru;
  };
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };

  size_t max_senders_;
  uint64_t evictions_ = 0;
  // Most recently accepted sender at the front.
  std::list<std::string> lru_;
  std::unordered_map<std::string, Window, Hash, std::equal_to<>> windows_;
};

// The counter a sender stamps on each message it seals. It starts at the wall-clock
// microseconds at process start, so a restarted sender continues above everything its previous
// incarnation sent (as long as it sent fewer than one message per microsecond of uptime and the
// clock did not step back). Thread safe: Next() is one atomic increment.
class CounterSource {
 public:
  explicit CounterSource(int64_t wall_micros);
  CounterSource(const CounterSource&) = delete;
  CounterSource& operator=(const CounterSource&) = delete;

  // Strictly increasing across calls.
  uint64_t Next();

 private:
  std::atomic<uint64_t> next_;
};

}  // namespace vsc::proto
