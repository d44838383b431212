// One TOML document parsed for a configuration loader: a syntax error comes back as
// InvalidArgument "ORIGIN:LINE: what is wrong", the form every configuration error takes.
// Exceptions stay inside (toml++ throws). Pure.
#pragma once

#include <toml++/toml.h>

#include <string_view>

#include "common/status.h"

namespace vsc {

Result<toml::table> ParseTomlDocument(std::string_view text, std::string_view origin);

}  // namespace vsc
