// Logging: spdlog, one process-wide logger named after the role ("director", "rs1"...).
// Lines are "2026-11-30 04:01:37.123 [director] info: rs2 ACTIVE -> SILENT (2 heartbeats missed)".
#pragma once

#include <spdlog/spdlog.h>

#include <string>
#include <string_view>

#include "common/status.h"

namespace vsc {

// Installs the default logger for this process. `level` is one of trace, debug, info, warn,
// error, off; anything else is an InvalidArgument.
Status InitLogging(std::string_view role, std::string_view level);

}  // namespace vsc
