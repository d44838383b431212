// Counter: a statistics counter with one writer thread and any number of readers. A single
// writer needs no atomic read-modify-write (no lock prefix on the hot path), only relaxed atomic
// loads and stores; readers sum counters of several writers.
#pragma once

#include <atomic>
#include <cstdint>

namespace vsc {

class Counter {
 public:
  void Add(uint64_t n = 1) {
    v_.store(v_.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
  }
  void Sub(uint64_t n = 1) {
    v_.store(v_.load(std::memory_order_relaxed) - n, std::memory_order_relaxed);
  }
  void Set(uint64_t n) { v_.store(n, std::memory_order_relaxed); }
  uint64_t Get() const { return v_.load(std::memory_order_relaxed); }

 private:
  std::atomic<uint64_t> v_{0};
};

}  // namespace vsc
