// Ready file: a daemon started with port 0 writes the ports it actually bound, as one JSON
// object, once it serves. Written to PATH.tmp and renamed, so a reader never sees half a file.
// Tests and `vsc demo` wait for it instead of sleeping.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "common/status.h"

namespace vsc {

// `fields` are written as "key": value with values given as JSON text (numbers or quoted).
Status WriteReadyFile(const std::string& path,
                      const std::vector<std::pair<std::string, std::string>>& fields);

}  // namespace vsc
