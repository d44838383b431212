#include "director/read_queue.h"

#include <algorithm>

namespace vsc::director {

proto::Message DirectorReadRefusal(uint64_t request_id, const std::string& error) {
  proto::Message m;
  proto::ReadResponse* r = m.mutable_read_response();
  r->set_request_id(request_id);
  r->set_ok(false);
  r->set_error(error);
  r->set_replica_id("director");
  return m;
}

std::optional<size_t> PickReplica(std::span<const ReadCandidate> candidates, uint64_t min_seq) {
  std::optional<size_t> best;
  for (size_t i = 0; i < candidates.size(); ++i) {
    const ReadCandidate& c = candidates[i];
    if (!c.eligible || c.applied_seq < min_seq) continue;
    if (!best || c.load < candidates[*best].load) best = i;
  }
  return best;
}

Status ReadQueue::Push(QueuedRead read) {
  if (reads_.size() >= capacity_) {
    return ResourceExhausted("overloaded: request queue full (" + std::to_string(capacity_) + ")");
  }
  reads_.push_back(std::move(read));
  return Status::Ok();
}

size_t ReadQueue::Drain(const std::function<bool(const QueuedRead&)>& route) {
  const size_t before = reads_.size();
  std::erase_if(reads_, [&](const QueuedRead& r) { return route(r); });
  return before - reads_.size();
}

std::vector<QueuedRead> ReadQueue::Expire(TimePoint now) {
  std::vector<QueuedRead> out;
  // Deadlines need not be in arrival order (the caller may vary timeouts), so scan everything.
  for (auto it = reads_.begin(); it != reads_.end();) {
    if (it->deadline <= now) {
      out.push_back(std::move(*it));
      it = reads_.erase(it);
    } else {
      ++it;
    }
  }
  return out;
}

std::optional<TimePoint> ReadQueue::next_deadline() const {
  std::optional<TimePoint> earliest;
  for (const QueuedRead& r : reads_) {
    if (!earliest || r.deadline < *earliest) earliest = r.deadline;
  }
  return earliest;
}

}  // namespace vsc::director
