// ReplicaWindow: the bounded in-flight window of one replica's replication stream (DESIGN §7
// "Backpressure", seed 001's FULL node). Entries sent but not yet acknowledged count against a
// limit in entries and one in bytes; while the window is full the replica is BUSY: it gets no
// new entries and no reads until its acks free room. Pure; one owner (the control thread).
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>

namespace vsc::director {

struct WindowLimits {
  uint32_t max_entries = 1024;
  uint64_t max_bytes = 4 << 20;
};

class ReplicaWindow {
 public:
  explicit ReplicaWindow(WindowLimits limits) : limits_(limits) {}

  // True when one more entry of `bytes` fits. An empty window always takes one entry, however
  // large, so an entry bigger than max_bytes cannot stall the stream forever.
  bool CanSend(uint64_t bytes) const;
  // Records an entry sent. Seqs must increase (a broken invariant aborts).
  void OnSent(uint64_t seq, uint64_t bytes);
  // The replica applied everything up to `applied_seq`: releases those entries. Returns how
  // many were released. An ack below what was already released changes nothing.
  size_t OnAcked(uint64_t applied_seq);
  // Forgets everything in flight (the stream restarts or the replica is gone).
  void Reset();

  // No room for another entry: entries or bytes at their limit.
  bool full() const { return entries() >= limits_.max_entries || bytes_ >= limits_.max_bytes; }
  size_t entries() const { return in_flight_.size(); }
  uint64_t bytes() const { return bytes_; }
  // The larger of the entry and byte fill, 0..1 (above 1 only with one oversized entry).
  double fill() const;
  const WindowLimits& limits() const { return limits_; }

 private:
  struct Sent {
    uint64_t seq;
    uint64_t bytes;
  };
  WindowLimits limits_;
  std::deque<Sent> in_flight_;
  uint64_t bytes_ = 0;
};

}  // namespace vsc::director
