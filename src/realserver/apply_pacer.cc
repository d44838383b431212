#include "realserver/apply_pacer.h"

namespace vsc::realserver {

Duration ApplyPacer::Delay(TimePoint now, size_t queued_entries) const {
  if (!started_ || queued_entries >= max_batch_) return Duration::zero();
  const TimePoint ready = last_start_ + min_interval_;
  return ready > now ? ready - now : Duration::zero();
}

}  // namespace vsc::realserver
