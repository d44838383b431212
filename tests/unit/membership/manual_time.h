// The manual clock's instants the membership tests write their timelines in: T(ms) is `ms`
// milliseconds after the epoch.
#pragma once

#include <chrono>
#include <cstdint>

#include "common/clock.h"

namespace vsc::membership::testing_util {

inline TimePoint T(int64_t ms) { return TimePoint(std::chrono::milliseconds(ms)); }

}  // namespace vsc::membership::testing_util
