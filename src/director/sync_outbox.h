// SyncOutbox: the records a director's workers note for its peers (sync_record.h), waiting for
// StateSync to send them. Workers Note() from their threads; StateSync takes the whole queue
// on its timer. Bounded: when the sender falls behind, new notes are dropped and counted
// (the peers then miss those clients' templates, as LVS's sync daemon does when its queue is
// full), never blocking a worker beyond the short lock.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

#include "director/sync_record.h"

namespace vsc::director {

class SyncOutbox {
 public:
  explicit SyncOutbox(size_t capacity = 65536) : capacity_(capacity) {}

  void Note(const SyncRecord& record) {
    std::lock_guard lock(mu_);
    if (queue_.size() >= capacity_) {
      dropped_.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    queue_.push_back(record);
  }

  // Everything noted since the last call, in order.
  std::vector<SyncRecord> Take() {
    std::vector<SyncRecord> out;
    std::lock_guard lock(mu_);
    out.swap(queue_);
    return out;
  }

  uint64_t dropped() const { return dropped_.load(std::memory_order_relaxed); }

 private:
  const size_t capacity_;
  std::mutex mu_;
  std::vector<SyncRecord> queue_;
  std::atomic<uint64_t> dropped_{0};
};

}  // namespace vsc::director
