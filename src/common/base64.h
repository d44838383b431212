// Standard base64 (RFC 4648 §4, with '=' padding), as rqlite shows BLOBs. Pure; thread safe.
#pragma once

#include <string>
#include <string_view>

namespace vsc {

std::string Base64Encode(std::string_view bytes);

}  // namespace vsc
