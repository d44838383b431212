#include "director/replica_window.h"

#include <algorithm>
#include <cstdlib>

namespace vsc::director {

bool ReplicaWindow::CanSend(uint64_t bytes) const {
  if (in_flight_.empty()) return limits_.max_entries > 0;
  return in_flight_.size() < limits_.max_entries && bytes_ + bytes <= limits_.max_bytes;
}

void ReplicaWindow::OnSent(uint64_t seq, uint64_t bytes) {
  if (!in_flight_.empty() && seq <= in_flight_.back().seq) std::abort();
  in_flight_.push_back({seq, bytes});
  bytes_ += bytes;
}

size_t ReplicaWindow::OnAcked(uint64_t applied_seq) {
  size_t released = 0;
  while (!in_flight_.empty() && in_flight_.front().seq <= applied_seq) {
    bytes_ -= in_flight_.front().bytes;
    in_flight_.pop_front();
    ++released;
  }
  return released;
}

void ReplicaWindow::Reset() {
  in_flight_.clear();
  bytes_ = 0;
}

double ReplicaWindow::fill() const {
  const double e = limits_.max_entries == 0
                       ? 1.0
                       : static_cast<double>(in_flight_.size()) / limits_.max_entries;
  const double b =
      limits_.max_bytes == 0 ? 1.0 : static_cast<double>(bytes_) / limits_.max_bytes;
  return std::max(e, b);
}

}  // namespace vsc::director
