#include "common/log_throttle.h"

namespace vsc {

std::optional<uint64_t> LogThrottle::Admit(std::string_view kind, TimePoint now) {
  if (last_ && kind == kind_ && now - *last_ < interval_) {
    ++held_;
    return std::nullopt;
  }
  const uint64_t held = kind == kind_ ? held_ : 0;
  kind_ = std::string(kind);
  last_ = now;
  held_ = 0;
  return held;
}

}  // namespace vsc
