// A token bucket: `rate` requests per second on average, bursts of up to `burst`. Pure: the
// caller passes `now` (DESIGN: time is a parameter). Not thread safe: one per connection.
#pragma once

#include "common/clock.h"

namespace vsc::relay {

class TokenBucket {
 public:
  // rate 0 means unlimited.
  TokenBucket(double rate, double burst, TimePoint now);
  // True, and one token spent, when a request may go now.
  bool Take(TimePoint now);

 private:
  double rate_;
  double burst_;
  double tokens_;
  TimePoint last_;
};

}  // namespace vsc::relay
