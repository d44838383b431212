#include "common/duration_text.h"

#include <charconv>
#include <cmath>
#include <string>

namespace vsc {
namespace {

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

}  // namespace

Result<int64_t> ParseDuration(std::string_view text, DurationUnit unit) {
  const std::string shown(text);
  double scale_ms = static_cast<double>(unit);
  std::string_view number = text;
  if (EndsWith(text, "ms")) {
    scale_ms = 1, number.remove_suffix(2);
  } else if (EndsWith(text, "s")) {
    scale_ms = 1000, number.remove_suffix(1);
  } else if (EndsWith(text, "m")) {
    scale_ms = 60'000, number.remove_suffix(1);
  }
  double value = 0;
  auto [p, ec] = std::from_chars(number.data(), number.data() + number.size(), value);
  if (number.empty() || ec != std::errc() || p != number.data() + number.size() || value < 0 ||
      !std::isfinite(value)) {
    return InvalidArgument("'" + shown + "' is not a duration (examples: 250ms, 2s, 1m)");
  }
  const double ms = value * scale_ms;
  const double in_unit = ms / static_cast<double>(unit);
  if (in_unit > 9.0e15) return InvalidArgument("'" + shown + "' is out of range");
  if (in_unit != std::floor(in_unit)) {
    return InvalidArgument("'" + shown + "' is not a whole number of " +
                           (unit == DurationUnit::kMillis ? "milliseconds" : "seconds"));
  }
  return static_cast<int64_t>(in_unit);
}

bool DurationUnitOfName(std::string_view name, DurationUnit* unit) {
  if (EndsWith(name, "_ms") || EndsWith(name, "-ms")) {
    *unit = DurationUnit::kMillis;
    return true;
  }
  if (EndsWith(name, "_s") || EndsWith(name, "-s")) {
    *unit = DurationUnit::kSeconds;
    return true;
  }
  return false;
}

}  // namespace vsc
