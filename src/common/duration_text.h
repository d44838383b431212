// Durations as an operator types them: "250", "250ms", "2s", "1.5s", "1m". A bare number is in
// the unit that the option's name carries (`--timeout-ms 250`, `persistence_timeout_s = 360`);
// an explicit unit always wins, so `--timeout-ms 2s` is 2000 ms. Pure; no allocation on success.
#pragma once

#include <cstdint>
#include <string_view>

#include "common/status.h"

namespace vsc {

enum class DurationUnit : int64_t { kMillis = 1, kSeconds = 1000 };

// The duration in `unit` (whole units only: "1500ms" is not a whole number of seconds).
Result<int64_t> ParseDuration(std::string_view text, DurationUnit unit);

// The unit an option or key name carries: "_ms"/"-ms" → ms, "_s"/"-s" → s, none → nullopt-like
// false (the name is not a duration).
bool DurationUnitOfName(std::string_view name, DurationUnit* unit);

}  // namespace vsc
