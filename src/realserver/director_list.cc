#include "realserver/director_list.h"

#include <algorithm>

namespace vsc::realserver {

DirectorList::DirectorList(size_t count) : count_(std::max<size_t>(count, 1)) {}

void DirectorList::StartRound() {
  tried_ = 0;
  standby_seen_ = false;
}

std::chrono::milliseconds DirectorList::OnFailure(bool standby, TimePoint now) {
  standby_seen_ = standby_seen_ || standby;
  ++tried_;
  current_ = (current_ + 1) % count_;
  if (tried_ < count_) return std::chrono::milliseconds(0);
  const bool standby_round = standby_seen_;
  StartRound();
  if (standby_round) {
    backoff_ = kFirstBackoff;
    return kFirstBackoff;
  }
  if (now < steady_until_) return kFirstBackoff;  // a failover may be under way
  const std::chrono::milliseconds wait = backoff_;
  backoff_ = std::min(backoff_ * 2, kMaxBackoff);
  return wait;
}

void DirectorList::OnRegistered() {
  StartRound();
  backoff_ = kFirstBackoff;
  steady_until_ = TimePoint{};
}

std::chrono::milliseconds DirectorList::OnSessionLost(TimePoint now) {
  StartRound();
  backoff_ = kFirstBackoff;
  steady_until_ = now + kSteadyAfterLoss;
  return kFirstBackoff;
}

}  // namespace vsc::realserver
