// LogThrottle: decides whether a repeated warning is written now, so a condition that recurs
// on every retry (a director that is not listening, a wrong cluster key, a flood of forged
// sessions) is reported at once and then at most once per interval, with the number of
// repeats that were held back. A different kind of problem is reported at once.
//
// Pure: `now` is a parameter. Not thread safe; one per thread or component.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/clock.h"

namespace vsc {

class LogThrottle {
 public:
  explicit LogThrottle(Duration interval) : interval_(interval) {}

  // When the line for `kind` should be written now: the number of earlier occurrences that
  // were held back since the last line (0 for the first). nullopt: hold this one back.
  std::optional<uint64_t> Admit(std::string_view kind, TimePoint now);

 private:
  Duration interval_;
  std::string kind_;
  std::optional<TimePoint> last_;
  uint64_t held_ = 0;
};

}  // namespace vsc
